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

package driver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files of an upstreamPKI's dir.
const (
	servingCertFile = "apiserver.crt" // for 127.0.0.1 and localhost, signed by the CA
	servingKeyFile  = "apiserver.key"
	saKeyFile       = "sa.key" // signs service account tokens
	saPublicFile    = "sa.pub" // verifies them
	tokensFile      = "tokens.csv"
)

// upstreamPKI is what every kube-apiserver the bench starts shares,
// generated once per run before any is timed: a CA and a serving
// certificate it signed, a service account key pair, and a token auth file
// with one admin token (group system:masters) and the user User.
type upstreamPKI struct {
	dir       string
	caPEM     []byte // the CA certificate, for the kubeconfigs
	token     string // the admin's bearer token
	userToken string // the user User bearer token
}

// newUpstreamPKI writes the files into dir.
func newUpstreamPKI(dir string) (*upstreamPKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &upstreamPKI{dir: dir}
	token := make([]byte, 16)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	p.token = hex.EncodeToString(token)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	p.userToken = hex.EncodeToString(token)
	if err := p.writeCerts(); err != nil {
		return nil, fmt.Errorf("generating kube-apiserver's certificates: %w", err)
	}
	if err := p.writeServiceAccountKey(); err != nil {
		return nil, fmt.Errorf("generating the service account key: %w", err)
	}
	tokens := p.token + ",bench-admin,bench-admin,system:masters\n" + p.userToken + "," + User + "," + User + "\n"
	if err := os.WriteFile(p.path(tokensFile), []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *upstreamPKI) path(file string) string { return filepath.Join(p.dir, file) }

// writeCerts makes the CA (kept in memory only) and the serving
// certificate.
func (p *upstreamPKI) writeCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench-upstream-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return err
	}
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), p.caPEM...)
	if err := os.WriteFile(p.path(servingCertFile), chain, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.path(servingKeyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

// writeServiceAccountKey makes an RSA key pair, as kubeadm does.
func (p *upstreamPKI) writeServiceAccountKey() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(p.path(saKeyFile), keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.path(saPublicFile), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}
