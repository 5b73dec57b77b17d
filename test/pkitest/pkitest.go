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

// Package pkitest makes the keys, certificate authorities, certificates
// and certificate requests tests need, as PEM. It imports the standard
// library only: any test may use it, and no code but tests should.
package pkitest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer

	keyPEM []byte
}

// Option changes the template of a CA's certificate.
type Option func(*x509.Certificate)

// Valid makes a CA valid from notBefore until notAfter, instead of from an
// hour ago until an hour from now.
func Valid(notBefore, notAfter time.Time) Option {
	return func(c *x509.Certificate) { c.NotBefore, c.NotAfter = notBefore, notAfter }
}

// NewCA returns a CA whose certificate has common name name and may sign
// certificates, valid from an hour ago until an hour from now unless an
// option says otherwise.
func NewCA(t testing.TB, name string, opts ...Option) *CA {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	for _, o := range opts {
		o(tmpl)
	}
	key, keyPEM := Key(t)
	der := create(t, tmpl, nil, key, key)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, keyPEM: keyPEM}
}

// CertPEM is the CA's certificate (PEM).
func (ca *CA) CertPEM() []byte {
	return encode(ca.Cert.Raw)
}

// KeyPEM is the CA's private key (PEM).
func (ca *CA) KeyPEM() []byte {
	return ca.keyPEM
}

// Pool is a certificate pool holding the CA's certificate only.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issue returns a certificate of template for a new key, signed by the
// CA, and that key (both PEM). A serial number and validity (from an hour
// ago until an hour from now) are filled in if template has none; the
// subject, names and usages are template's.
func (ca *CA) Issue(t testing.TB, template *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, keyPEM := Key(t)
	return encode(create(t, template, ca.Cert, key, ca.Key)), keyPEM
}

// SelfSigned returns a certificate of template signed by its own new key,
// and that key (both PEM). It fills in what Issue does; template's IsCA
// and BasicConstraintsValid say whether it is a CA's.
func SelfSigned(t testing.TB, template *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, keyPEM := Key(t)
	return encode(create(t, template, nil, key, key)), keyPEM
}

// Request returns a certificate request (CSR) of template, signed by a
// new key, and that key (both PEM).
func Request(t testing.TB, template *x509.CertificateRequest) (csrPEM, keyPEM []byte) {
	t.Helper()
	key, keyPEM := Key(t)
	der, err := x509.CreateCertificateRequest(rand.Reader, template, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), keyPEM
}

// Key returns a new ECDSA P-256 key and its PEM ("EC PRIVATE KEY").
func Key(t testing.TB) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// WriteFile writes data to file name in dir, readable by its owner only,
// and returns the file's path.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// create returns the DER of a certificate of template, with a serial
// number and validity filled in if unset, for key's public key, signed
// by signer as parent (or by key itself, if parent is nil).
func create(t testing.TB, template, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer) []byte {
	t.Helper()
	tmpl := *template
	if tmpl.SerialNumber == nil {
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
		if err != nil {
			t.Fatal(err)
		}
		tmpl.SerialNumber = serial
	}
	now := time.Now()
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = now.Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = now.Add(time.Hour)
	}
	if parent == nil {
		parent = &tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, parent, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// encode is a DER certificate as PEM.
func encode(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
