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

package datadir

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The data dir keeps what a restart must find again; every file is mode 0600.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	tokenFile       = "admin.token"
	saKeyFile       = "sa.key"
	kubeconfigFile  = "kubeconfig"
)

// Credentials are the CA, the serving certificate, the admin token and the
// front proxy's.
type Credentials struct {
	CACert []byte // PEM
	CAKey  []byte // PEM
	// SAKey signs service account tokens.
	SAKey       *ecdsa.PrivateKey
	ServingCert []byte // PEM
	ServingKey  []byte // PEM
	AdminToken  string
	FrontProxy  FrontProxy
}

// LoadOrCreateCredentials reads the credentials from dir, creating any that are
// missing. The serving certificate is re-issued when it does not cover hosts.
// A file that is there but unusable is an error naming it, never overwritten.
// ECDSA P-256 keys keep first start fast.
func LoadOrCreateCredentials(dir string, hosts []string) (*Credentials, error) {
	token, err := loadOrCreateToken(filepath.Join(dir, tokenFile))
	if err != nil {
		return nil, err
	}
	caCertPEM, caKeyPEM, err := loadOrCreateCA(filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile), "miniapiserver-ca")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := loadOrCreateServing(dir, caCertPEM, caKeyPEM, hosts)
	if err != nil {
		return nil, err
	}
	saKey, err := loadOrCreateKey(filepath.Join(dir, saKeyFile))
	if err != nil {
		return nil, err
	}
	frontProxy, err := loadOrCreateFrontProxy(dir)
	if err != nil {
		return nil, err
	}
	return &Credentials{CACert: caCertPEM, CAKey: caKeyPEM, SAKey: saKey, ServingCert: certPEM, ServingKey: keyPEM, AdminToken: token,
		FrontProxy: frontProxy}, nil
}

// loadOrCreateToken reads the admin token from path, or creates one if there
// is no such file. People write it by hand (echo mytoken > admin.token), so
// the whitespace around the token is not part of it.
func loadOrCreateToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		token := NewToken()
		return token, writeFile(path, []byte(token))
	}
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	switch {
	case token == "":
		return "", fmt.Errorf("admin token file %s is empty: write a token in it, or remove it to have one generated", path)
	case strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return "", fmt.Errorf("admin token in %s contains whitespace or control characters", path)
	}
	return token, nil
}

// loadOrCreateCA reads the CA at certPath and keyPath, or creates one
// named name.
func loadOrCreateCA(certPath, keyPath, name string) (certPEM, keyPEM []byte, err error) {
	certPEM, keyPEM, found, err := loadPair(certPath, keyPath)
	if err != nil || found {
		return certPEM, keyPEM, err
	}
	now := time.Now()
	return issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", name, now.Unix())},
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil, certPath, keyPath)
}

// loadOrCreateKey reads the EC private key at path, or creates one.
func loadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	keyPEM, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		return key, writeFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	}
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM key: remove it to make a new one (tokens signed by the old key stop working)", path)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

func loadOrCreateServing(dir string, caCertPEM, caKeyPEM []byte, hosts []string) (certPEM, keyPEM []byte, err error) {
	certPath, keyPath := filepath.Join(dir, servingCertFile), filepath.Join(dir, servingKeyFile)
	certPEM, keyPEM, found, err := loadPair(certPath, keyPath)
	if err != nil {
		return nil, nil, err
	}
	if found && covers(certPEM, caCertPEM, hosts) {
		return certPEM, keyPEM, nil
	}
	ca, caKey, err := parse(caCertPEM, caKeyPEM, filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "miniapiserver"},
		NotAfter:    time.Now().AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return issue(tmpl, ca, caKey, certPath, keyPath)
}

// issue creates a key and a certificate from tmpl signed by parent (self-signed
// when parent is nil), and writes both.
func issue(tmpl, parent *x509.Certificate, parentKey any, certPath, keyPath string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if certPath == "" {
		return certPEM, keyPEM, nil
	}
	return certPEM, keyPEM, errors.Join(writeFile(keyPath, keyPEM), writeFile(certPath, certPEM))
}

// clientCertificate issues a client certificate for user name in groups
// (its CN and O, as kube-apiserver's x509 authenticator reads them),
// signed by the CA, valid for a year; it writes no file.
func clientCertificate(caCertPEM, caKeyPEM []byte, name string, groups []string) (certPEM, keyPEM []byte, err error) {
	if name == "" {
		return nil, nil, errors.New("a user needs a name")
	}
	ca, caKey, err := parse(caCertPEM, caKeyPEM, caCertFile, caKeyFile)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name, Organization: groups},
		NotAfter:    time.Now().AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return issue(tmpl, ca, caKey, "", "")
}

// covers reports whether the serving certificate chains to the CA, is
// valid for a day more, and names every host.
func covers(certPEM, caPEM []byte, hosts []string) bool {
	return validFor(certPEM, caPEM, x509.ExtKeyUsageServerAuth, hosts)
}

// validFor reports whether the certificate chains to the CA for usage, is
// valid for a day more, and names every host (checked once with none).
func validFor(certPEM, caPEM []byte, usage x509.ExtKeyUsage, hosts []string) bool {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return false
	}
	if len(hosts) == 0 {
		hosts = []string{""}
	}
	for _, h := range hosts {
		opts := x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: time.Now().Add(24 * time.Hour), KeyUsages: []x509.ExtKeyUsage{usage}}
		if _, err := cert.Verify(opts); err != nil {
			return false
		}
	}
	return true
}

// loadPair reads a certificate and its key. found is false when either file
// does not exist (both are then created anew); any other problem, such as a
// damaged or mismatched file, is an error naming the file.
func loadPair(certPath, keyPath string) (certPEM, keyPEM []byte, found bool, err error) {
	certPEM, errCert := os.ReadFile(certPath)
	keyPEM, errKey := os.ReadFile(keyPath)
	if errors.Is(errCert, fs.ErrNotExist) || errors.Is(errKey, fs.ErrNotExist) {
		return nil, nil, false, nil
	}
	if err := errors.Join(errCert, errKey); err != nil {
		return nil, nil, false, err
	}
	if _, _, err := parse(certPEM, keyPEM, certPath, keyPath); err != nil {
		return nil, nil, false, err
	}
	return certPEM, keyPEM, true, nil
}

// parse decodes a PEM certificate and the EC key that goes with it; an error
// names the file at fault and says how to start over.
func parse(certPEM, keyPEM []byte, certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	const hint = "remove it to have a new one created"
	certBlock, _ := pem.Decode(certPEM)
	if certBlock == nil || certBlock.Type != "CERTIFICATE" {
		return nil, nil, fmt.Errorf("certificate %s holds no PEM certificate (%s)", certPath, hint)
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate %s is damaged (%s): %w", certPath, hint, err)
	}
	keyBlock, _ := pem.Decode(keyPEM)
	if keyBlock == nil {
		return nil, nil, fmt.Errorf("key %s holds no PEM key (%s)", keyPath, hint)
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("key %s is damaged (%s): %w", keyPath, hint, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("key %s does not match certificate %s (remove both to have new ones created)", keyPath, certPath)
	}
	return cert, key, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// writeFile writes data with mode 0600, atomically (write and rename), so a
// crash never leaves a half-written key behind.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// NewToken returns 32 random bytes, hex-encoded.
func NewToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}
