/*
Copyright The miniapiserver Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package pkitest

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// parse is the certificate of certPEM.
func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", certPEM)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestIssue: an issued certificate keeps its template's subject, names and
// usages, verifies against its CA's pool and not another CA's, and pairs
// with its key.
func TestIssue(t *testing.T) {
	ca, other := NewCA(t, "ca"), NewCA(t, "other")
	certPEM, keyPEM := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "server", Organization: []string{"org"}},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	cert := parse(t, certPEM)
	if cert.Subject.CommonName != "server" || len(cert.Subject.Organization) != 1 || len(cert.IPAddresses) != 1 || cert.IsCA {
		t.Errorf("got subject %s, IPs %v, CA %v; want server in org, 127.0.0.1, no CA", cert.Subject, cert.IPAddresses, cert.IsCA)
	}
	opts := x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := cert.Verify(opts); err != nil {
		t.Errorf("verify against the CA's pool: %v", err)
	}
	opts.Roots = other.Pool()
	var unknown x509.UnknownAuthorityError
	if _, err := cert.Verify(opts); !errors.As(err, &unknown) {
		t.Errorf("verify against another CA's pool: got %v, want unknown authority", err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Errorf("certificate and key: %v", err)
	}
	if !parse(t, ca.CertPEM()).Equal(ca.Cert) {
		t.Errorf("CertPEM is not the CA's certificate")
	}
	if _, err := tls.X509KeyPair(ca.CertPEM(), ca.KeyPEM()); err != nil {
		t.Errorf("CA's certificate and key: %v", err)
	}
}

// TestValidity: certificates are valid from an hour ago until an hour
// from now unless a template or option says otherwise.
func TestValidity(t *testing.T) {
	end := time.Now().Add(-time.Minute).Truncate(time.Second)
	expired := NewCA(t, "expired", Valid(end.Add(-time.Hour), end))
	if !expired.Cert.NotAfter.Equal(end) || !expired.Cert.NotBefore.Equal(end.Add(-time.Hour)) {
		t.Errorf("Valid: got %v to %v, want %v to %v", expired.Cert.NotBefore, expired.Cert.NotAfter, end.Add(-time.Hour), end)
	}
	certPEM, _ := SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "x"}})
	cert := parse(t, certPEM)
	if d := cert.NotAfter.Sub(cert.NotBefore); d != 2*time.Hour || time.Until(cert.NotAfter) <= 0 {
		t.Errorf("default validity: got %v to %v, want two hours around now", cert.NotBefore, cert.NotAfter)
	}
	if cert.IsCA || cert.SerialNumber.Sign() <= 0 {
		t.Errorf("got CA %v, serial %v; want no CA and a positive serial", cert.IsCA, cert.SerialNumber)
	}
}

// TestRequest: a request keeps its template's subject and names, and is
// signed by its key.
func TestRequest(t *testing.T) {
	csrPEM, keyPEM := Request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob"}, DNSNames: []string{"n1"}})
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		t.Fatalf("not a PEM certificate request: %q", csrPEM)
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := csr.CheckSignature(); err != nil || csr.Subject.CommonName != "bob" || len(csr.DNSNames) != 1 {
		t.Errorf("got %s %v (signature: %v), want bob [n1], signed", csr.Subject, csr.DNSNames, err)
	}
	if block, _ := pem.Decode(keyPEM); block == nil || block.Type != "EC PRIVATE KEY" {
		t.Errorf("key: got %q, want an EC PRIVATE KEY", keyPEM)
	}
}

// TestWriteFile: the file has the data, for its owner only.
func TestWriteFile(t *testing.T) {
	path := WriteFile(t, t.TempDir(), "f", []byte("data"))
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "data" {
		t.Errorf("got %q, %v; want data", got, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: got %v, want 0600", fi.Mode().Perm())
	}
}
