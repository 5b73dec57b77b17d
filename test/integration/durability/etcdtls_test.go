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

package durability

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestExternalEtcdWithTLSAndPrefix points a server at an etcd that only
// takes TLS clients with a certificate from its CA, with kube-apiserver's
// --etcd-cafile, --etcd-certfile, --etcd-keyfile and --etcd-prefix: the
// server serves, and its objects are under the prefix.
func TestExternalEtcdWithTLSAndPrefix(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pki := newTestPKI(t, dir)
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.UnsafeNoFsync = true
	clientURL := url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	peerURL := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ClientTLSInfo.CertFile, cfg.ClientTLSInfo.KeyFile = pki.serverCert, pki.serverKey
	cfg.ClientTLSInfo.TrustedCAFile, cfg.ClientTLSInfo.ClientCertAuth = pki.ca, true
	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Close)
	select {
	case <-etcd.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready after a minute")
	}
	endpoint := "https://" + etcd.Clients[0].Addr().String()

	s := testserver.Start(t, func(o *server.Options) {
		o.EtcdServers = []string{endpoint}
		o.EtcdCAFile, o.EtcdCertFile, o.EtcdKeyFile = pki.ca, pki.clientCert, pki.clientKey
		o.EtcdPrefix = "/tenant-a"
	})
	client := kubernetes.NewForConfigOrDie(s.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "over-tls"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	raw, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: pki.clientTLS(t), DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for key, want := range map[string]int64{"/tenant-a/configmaps/default/over-tls": 1, "/registry/": 0} {
		resp, err := raw.Get(t.Context(), key, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		if resp.Count != want {
			t.Errorf("etcd keys under %s: got %d, want %d", key, resp.Count, want)
		}
	}
}

// testPKI is a CA and, signed by it, a serving certificate for 127.0.0.1
// and a client certificate, as files.
type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newTestPKI(t *testing.T, dir string) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := testPKI{ca: filepath.Join(dir, "ca.crt")}
	writePEM(t, p.ca, "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		cert, keyFile := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
		writePEM(t, cert, "CERTIFICATE", der)
		writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
		return cert, keyFile
	}
	p.serverCert, p.serverKey = issue("etcd-server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("etcd-client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func (p testPKI) clientTLS(t *testing.T) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(p.ca)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots}
}

func writePEM(t *testing.T, path, blockType string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
