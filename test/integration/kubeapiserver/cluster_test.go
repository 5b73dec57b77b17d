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

package kubeapiserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

func TestMain(m *testing.M) { framework.Main(m) }

// persona returns the path of a link named name (kube-apiserver, etcd) to
// the miniapiserver binary: what envtest-assets makes.
func persona(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.Symlink(framework.ServerBinaryPath(t), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// process is a persona running as a child process; its output is logged
// by the test that started it when it ends.
type process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

// syncBuffer is a bytes.Buffer two goroutines may use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// start starts path with args; the test's end stops it (SIGTERM) and logs
// its output.
func start(t *testing.T, path string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(path, args...), out: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("%s %v:\n%s", filepath.Base(path), args, p.out.String())
		}
	})
	return p
}

// startEtcd runs the etcd persona with envtest's flags and returns its
// client URL once /health says it is healthy.
func startEtcd(t *testing.T) string {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d", framework.FreePort(t))
	p := start(t, persona(t, "etcd"), "--data-dir="+t.TempDir(), "--listen-client-urls="+url, "--advertise-client-urls="+url,
		"--listen-peer-urls=http://127.0.0.1:0", "--unsafe-no-fsync")
	waitOK(t, p, http.DefaultClient, url+"/health")
	return url
}

// waitOK polls url until it answers 200, failing if p exits first.
func waitOK(t *testing.T, p *process, c *http.Client, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			t.Fatalf("%s exited before %s answered:\n%s", p.cmd.Path, url, p.out.String())
		default:
		}
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: no 200 within a minute:\n%s", url, p.out.String())
}

// pki is what envtest makes in its cert dir: a CA for client
// certificates and a service account key pair.
type pki struct {
	dir                    string
	ca                     *pkitest.CA
	clientCA, saKey, saPub string
	// tlsCert and tlsKey are a serving certificate signed by the CA too.
	tlsCert, tlsKey string
	servingCA       []byte
	// without are envtest's flags to leave out.
	without []string
}

// withoutFlag returns p with envtest's flag name left out of the servers
// started with it.
func withoutFlag(p *pki, name string) *pki {
	p.without = append(p.without, name)
	return p
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), ca: pkitest.NewCA(t, "client-ca")}
	p.servingCA = p.ca.CertPEM()
	p.clientCA = pkitest.WriteFile(t, p.dir, "client-ca.crt", p.servingCA)
	sa, saKey := pkitest.Key(t)
	p.saKey = pkitest.WriteFile(t, p.dir, "sa.key", saKey)
	pub, err := x509.MarshalPKIXPublicKey(sa.Public())
	if err != nil {
		t.Fatal(err)
	}
	p.saPub = pkitest.WriteFile(t, p.dir, "sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	// A serving certificate, signed by the same CA.
	cert, key := p.ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: "apiserver"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
	p.tlsCert = pkitest.WriteFile(t, p.dir, "serving.crt", cert)
	p.tlsKey = pkitest.WriteFile(t, p.dir, "serving.key", key)
	return p
}

// user returns a client certificate and key (PEM) for name in groups,
// signed by the client CA: envtest's AddUser.
func (p *pki) user(t *testing.T, name string, groups ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	return p.ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: name, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
}

// apiserver is a kube-apiserver persona started as envtest starts
// kube-apiserver.
type apiserver struct {
	*process
	host string
	pki  *pki
}

// envtestArgs are the flags controller-runtime v0.25's envtest gives
// kube-apiserver (controlplane.APIServer's defaultArgs and CertAuthn).
func envtestArgs(p *pki, etcd, certDir string, port int) []string {
	return []string{
		"--etcd-servers=" + etcd, "--cert-dir=" + certDir, "--secure-port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--disable-admission-plugins=ServiceAccount", "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
		"--authorization-mode=RBAC", "--service-account-issuer=" + fmt.Sprintf("https://127.0.0.1:%d/", port),
		"--service-account-key-file=" + p.saPub, "--service-account-signing-key-file=" + p.saKey, "--client-ca-file=" + p.clientCA,
	}
}

// startAPIServer starts the kube-apiserver persona (launch) and waits for
// an anonymous 200 from /healthz, as envtest does.
func startAPIServer(t *testing.T, etcd string, p *pki, extra ...string) *apiserver {
	t.Helper()
	s := launch(t, etcd, p, extra...)
	waitOK(t, s.process, s.anonymous(), s.host+"/healthz")
	return s
}

// launch starts the kube-apiserver persona with envtest's flags, then
// extra (which override them: the last of a flag given twice wins),
// serving p's certificate.
func launch(t *testing.T, etcd string, p *pki, extra ...string) *apiserver {
	t.Helper()
	port := framework.FreePort(t)
	var args []string
	for _, a := range envtestArgs(p, etcd, t.TempDir(), port) {
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "="); !slices.Contains(p.without, name) {
			args = append(args, a)
		}
	}
	args = append(args, "--tls-cert-file="+p.tlsCert, "--tls-private-key-file="+p.tlsKey)
	proc := start(t, persona(t, "kube-apiserver"), append(args, extra...)...)
	return &apiserver{process: proc, host: fmt.Sprintf("https://127.0.0.1:%d", port), pki: p}
}

// waitForAdmin waits for the admin's 200 from /healthz.
func (s *apiserver) waitForAdmin(t *testing.T) {
	t.Helper()
	admin, err := rest.HTTPClientFor(s.config(t, "admin", "system:masters"))
	if err != nil {
		t.Fatal(err)
	}
	waitOK(t, s.process, admin, s.host+"/healthz")
}

// anonymous is an HTTP client without credentials that trusts the server.
func (s *apiserver) anonymous() *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.pki.servingCA)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

// config is a client config of user name in groups (a client certificate).
func (s *apiserver) config(t *testing.T, name string, groups ...string) *rest.Config {
	t.Helper()
	cert, key := s.pki.user(t, name, groups...)
	return &rest.Config{Host: s.host, TLSClientConfig: rest.TLSClientConfig{CAData: s.pki.servingCA, CertData: cert, KeyData: key}}
}

// admin is a client of a member of system:masters, as envtest's admin.
func (s *apiserver) admin(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(s.config(t, "admin", "system:masters"))
}

// ctx is a context for one request.
func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
