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
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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
	"github.com/miniapiserver/miniapiserver/test/pkitest"
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
	ca := pkitest.NewCA(t, "test-ca")
	p := testPKI{ca: pkitest.WriteFile(t, dir, "ca.crt", ca.CertPEM())}
	issue := func(name string, usage x509.ExtKeyUsage) (string, string) {
		certPEM, keyPEM := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}})
		return pkitest.WriteFile(t, dir, name+".crt", certPEM), pkitest.WriteFile(t, dir, name+".key", keyPEM)
	}
	p.serverCert, p.serverKey = issue("etcd-server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("etcd-client", x509.ExtKeyUsageClientAuth)
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
