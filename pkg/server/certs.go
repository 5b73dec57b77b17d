package server

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
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The data dir keeps what a restart must find again; every file is mode 0600.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	tokenFile       = "admin.token"
	kubeconfigFile  = "kubeconfig"
)

// credentials are the CA, the serving certificate and the admin token.
type credentials struct {
	caCert      []byte // PEM
	servingCert []byte // PEM
	servingKey  []byte // PEM
	adminToken  string
}

// loadOrCreateCredentials reads the credentials from dir, creating any that are
// missing. The serving certificate is re-issued when it does not cover hosts.
// ECDSA P-256 keys keep first start fast.
func loadOrCreateCredentials(dir string, hosts []string) (*credentials, error) {
	token, err := loadOrCreate(filepath.Join(dir, tokenFile), func() ([]byte, error) {
		return []byte(newToken()), nil
	})
	if err != nil {
		return nil, err
	}
	caCertPEM, caKeyPEM, err := loadOrCreateCA(dir)
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := loadOrCreateServing(dir, caCertPEM, caKeyPEM, hosts)
	if err != nil {
		return nil, err
	}
	return &credentials{caCert: caCertPEM, servingCert: certPEM, servingKey: keyPEM, adminToken: string(token)}, nil
}

func loadOrCreateCA(dir string) (certPEM, keyPEM []byte, err error) {
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	certPEM, errCert := os.ReadFile(certPath)
	keyPEM, errKey := os.ReadFile(keyPath)
	if errCert == nil && errKey == nil {
		return certPEM, keyPEM, nil
	}
	now := time.Now()
	return issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("miniapiserver-ca@%d", now.Unix())},
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil, certPath, keyPath)
}

func loadOrCreateServing(dir string, caCertPEM, caKeyPEM []byte, hosts []string) (certPEM, keyPEM []byte, err error) {
	certPath, keyPath := filepath.Join(dir, servingCertFile), filepath.Join(dir, servingKeyFile)
	certPEM, errCert := os.ReadFile(certPath)
	keyPEM, errKey := os.ReadFile(keyPath)
	if errCert == nil && errKey == nil && covers(certPEM, caCertPEM, hosts) {
		return certPEM, keyPEM, nil
	}
	ca, caKey, err := parse(caCertPEM, caKeyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the CA in %s: %w", dir, err)
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
	return certPEM, keyPEM, errors.Join(writeFile(keyPath, keyPEM), writeFile(certPath, certPEM))
}

// covers reports whether the certificate chains to the CA, is valid for a day
// more, and names every host.
func covers(certPEM, caPEM []byte, hosts []string) bool {
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
	for _, h := range hosts {
		opts := x509.VerifyOptions{Roots: roots, DNSName: h, CurrentTime: time.Now().Add(24 * time.Hour)}
		if _, err := cert.Verify(opts); err != nil {
			return false
		}
	}
	return true
}

func parse(certPEM, keyPEM []byte) (*x509.Certificate, any, error) {
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, nil, errors.New("no PEM data")
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
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

func loadOrCreate(path string, create func() ([]byte, error)) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return b, nil
	}
	b, err := create()
	if err != nil {
		return nil, err
	}
	return b, writeFile(path, b)
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

// newToken returns 32 random bytes, hex-encoded.
func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}
