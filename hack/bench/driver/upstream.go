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
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	readyzPoll    = 10 * time.Millisecond // between two GET /readyz of a starting kube-apiserver
	readyzTimeout = 2 * time.Second       // per GET /readyz
)

// upstreamBinaries are kube-apiserver and etcd, as hack/upstream/build.sh
// builds them.
type upstreamBinaries struct {
	apiserver, etcd  string   // absolute paths
	apiserverVersion string   // the first line of its --version
	args             []string // extra kube-apiserver flags
}

// findUpstream checks that dir holds both binaries and reads
// kube-apiserver's version.
func findUpstream(ctx context.Context, dir string, args []string) (*upstreamBinaries, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b := &upstreamBinaries{apiserver: filepath.Join(abs, "kube-apiserver"), etcd: filepath.Join(abs, "etcd"), args: args}
	if b.apiserverVersion, err = binaryVersion(ctx, b.apiserver); err != nil {
		return nil, fmt.Errorf("%w (hack/upstream/build.sh builds it)", err)
	}
	if _, err = binaryVersion(ctx, b.etcd); err != nil {
		return nil, fmt.Errorf("%w (hack/upstream/build.sh builds it)", err)
	}
	return b, nil
}

// startUpstream starts etcd on DataDir/etcd and, at once, kube-apiserver on
// it, then polls kube-apiserver's /readyz every readyzPoll until it answers
// 200.
func (s *Server) startUpstream(ctx context.Context, etcdPort, peerPort int) error {
	s.etcdURL = "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	kubeconfig := filepath.Join(s.DataDir, "kubeconfig")
	if err := s.env.pki.writeKubeconfig(kubeconfig, "https://127.0.0.1:"+strconv.Itoa(s.port)); err != nil {
		return err
	}
	var err error
	if s.rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		return err
	}
	began := time.Now()
	if s.etcd, err = launch(s.env.upstream.etcd, etcdArgs(filepath.Join(s.DataDir, "etcd"), s.etcdURL, peerURL), nil); err != nil {
		return err
	}
	s.etcd.diesOnSIGTERM = true
	if s.api, err = launch(s.env.upstream.apiserver, s.apiserverArgs(), nil); err != nil {
		return err
	}
	return s.awaitReadyz(ctx, began)
}

// restartAPI starts kube-apiserver again on the running etcd.
func (s *Server) restartAPI(ctx context.Context) error {
	began := time.Now()
	var err error
	if s.api, err = launch(s.env.upstream.apiserver, s.apiserverArgs(), nil); err != nil {
		return err
	}
	if err := s.awaitReadyz(ctx, began); err != nil {
		return errors.Join(err, s.api.stop(stopTimeout))
	}
	return nil
}

// etcdArgs are etcd's defaults (fsync included, as miniapiserver runs) but
// for the data dir and loopback URLs, and --enable-pprof, whose heap
// profile lets HeapAfterGC force a GC in etcd as it does in the servers.
func etcdArgs(dataDir, clientURL, peerURL string) []string {
	return []string{
		"--name", "default", "--data-dir", dataDir,
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default=" + peerURL,
		"--enable-pprof",
	}
}

// apiserverArgs are kube-apiserver's defaults but for what a server of its
// own on loopback needs, then the env's extra flags, then the server's.
func (s *Server) apiserverArgs() []string {
	pki := s.env.pki
	args := []string{
		"--etcd-servers=" + s.etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(s.port),
		"--tls-cert-file=" + pki.path(servingCertFile), "--tls-private-key-file=" + pki.path(servingKeyFile),
		"--token-auth-file=" + pki.path(tokensFile),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.path(saPublicFile),
		"--service-account-signing-key-file=" + pki.path(saKeyFile),
		"--service-cluster-ip-range=10.0.0.0/24",
		// No Endpoints for the kubernetes Service: its address is loopback.
		"--endpoint-reconciler-type=none",
		"--shutdown-delay-duration=0s", "--shutdown-watch-termination-grace-period=0s",
	}
	args = append(args, s.env.upstream.args...)
	return append(args, s.args...)
}

// awaitReadyz polls /readyz until it answers 200, either process exits,
// readyTimeout passes or ctx is done.
func (s *Server) awaitReadyz(ctx context.Context, began time.Time) error {
	hc, err := rest.HTTPClientFor(s.rc)
	if err != nil {
		return fmt.Errorf("creating HTTP client: %w", err)
	}
	defer CloseIdle(hc)
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyzPoll)
	defer tick.Stop()
	var last error
	for {
		if last = getReadyz(ctx, hc, s.rc.Host); last == nil {
			s.Ready = time.Since(began)
			return nil
		}
		select {
		case <-tick.C:
		case <-s.api.exited:
			return fmt.Errorf("kube-apiserver exited before it was ready (%v)%s", s.api.waitErr, s.api.stderr.excerpt())
		case <-s.etcd.exited:
			return fmt.Errorf("etcd exited before kube-apiserver was ready (%v)%s", s.etcd.waitErr, s.etcd.stderr.excerpt())
		case <-deadline.C:
			return fmt.Errorf("kube-apiserver not ready within %s: %w", readyTimeout, last)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// getReadyz is nil if GET host/readyz answers 200.
func getReadyz(ctx context.Context, hc *http.Client, host string) error {
	ctx, cancel := context.WithTimeout(ctx, readyzTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /readyz: %s", resp.Status)
	}
	return nil
}

// writeKubeconfig writes an admin kubeconfig for the kube-apiserver at
// host: the PKI's CA and admin token.
func (p *upstreamPKI) writeKubeconfig(path, host string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["upstream"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: p.caPEM}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: p.token}
	kc.Contexts["upstream"] = &clientcmdapi.Context{Cluster: "upstream", AuthInfo: "admin"}
	kc.CurrentContext = "upstream"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
