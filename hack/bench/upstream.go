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

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	readyzPoll    = 10 * time.Millisecond // between two GET /readyz of a starting kube-apiserver
	readyzTimeout = 2 * time.Second       // per GET /readyz
)

// upstreamBinaries are the kube-apiserver and etcd that -upstream names,
// as hack/upstream/build.sh builds them.
type upstreamBinaries struct {
	apiserver, etcd               string   // absolute paths
	apiserverVersion, etcdVersion string   // the first line of their --version
	args                          []string // -upstream-args: extra kube-apiserver flags
}

// findUpstream checks that dir holds both binaries and reads their
// versions.
func findUpstream(ctx context.Context, dir string, args []string) (upstreamBinaries, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return upstreamBinaries{}, fmt.Errorf("-upstream: %w", err)
	}
	b := upstreamBinaries{apiserver: filepath.Join(abs, "kube-apiserver"), etcd: filepath.Join(abs, "etcd"), args: args}
	if b.apiserverVersion, err = firstLine(binaryVersion(ctx, b.apiserver)); err != nil {
		return upstreamBinaries{}, fmt.Errorf("-upstream (hack/upstream/build.sh builds it): %w", err)
	}
	if b.etcdVersion, err = firstLine(binaryVersion(ctx, b.etcd)); err != nil {
		return upstreamBinaries{}, fmt.Errorf("-upstream (hack/upstream/build.sh builds it): %w", err)
	}
	return b, nil
}

func firstLine(s string, err error) (string, error) {
	line, _, _ := strings.Cut(s, "\n")
	return line, err
}

// upstreamServer is a running kube-apiserver and the etcd it stores in,
// each a process of its own.
type upstreamServer struct {
	api     *server // kube-apiserver; its kubeconfig is the bench's admin one
	etcd    *server
	etcdURL string        // etcd's client URL, where its /metrics are
	apiPort int           // kube-apiserver's secure port, kept across restartAPI
	began   time.Time     // etcd's exec; after restartAPI, kube-apiserver's
	ready   time.Duration // from began to the first 200 from /readyz
	stopped time.Duration // from SIGTERM to kube-apiserver's exit, then etcd's

	stopOnce sync.Once
	stopErr  error
}

// startUpstream starts etcd on dir/etcd and, at once, kube-apiserver on
// it, both on free loopback ports, then polls kube-apiserver's /readyz
// every readyzPoll until it answers 200. On error both have been stopped.
func startUpstream(ctx context.Context, b upstreamBinaries, pki *upstreamPKI, dir string) (*upstreamServer, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	apiURL := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := pki.writeKubeconfig(kubeconfig, apiURL); err != nil {
		return nil, err
	}
	u := &upstreamServer{etcdURL: etcdURL, apiPort: ports[2]}
	began := time.Now()
	u.began = began
	if u.etcd, err = launch(b.etcd, etcdArgs(filepath.Join(dir, "etcd"), etcdURL, peerURL), nil); err != nil {
		return nil, err
	}
	u.etcd.diesOnSIGTERM = true
	if u.api, err = launch(b.apiserver, apiserverArgs(b, pki, etcdURL, ports[2]), nil); err != nil {
		return nil, errors.Join(err, u.etcd.Stop())
	}
	u.api.kubeconfig = kubeconfig
	if err := u.awaitReadyz(ctx, began); err != nil {
		return nil, errors.Join(err, u.Stop())
	}
	return u, nil
}

// restartAPI starts kube-apiserver again on the running etcd, with the
// same flags and port, once the previous one has been stopped, and polls
// its /readyz as startUpstream does; u.began and u.ready are then this
// kube-apiserver's exec and readiness. On error it has been stopped.
func (u *upstreamServer) restartAPI(ctx context.Context, b upstreamBinaries, pki *upstreamPKI) error {
	kubeconfig := u.api.kubeconfig
	began := time.Now()
	api, err := launch(b.apiserver, apiserverArgs(b, pki, u.etcdURL, u.apiPort), nil)
	if err != nil {
		return err
	}
	api.kubeconfig = kubeconfig
	u.api, u.began = api, began
	if err := u.awaitReadyz(ctx, began); err != nil {
		return errors.Join(err, prefixErr("kube-apiserver", api.Stop()))
	}
	return nil
}

// etcdArgs are etcd's defaults (fsync included, as the bench's
// miniapiserver runs) but for the data dir and loopback URLs, and
// --enable-pprof, whose heap profile lets the informers section force a GC
// in etcd as it does in the servers.
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
// own on loopback needs, then -upstream-args.
func apiserverArgs(b upstreamBinaries, pki *upstreamPKI, etcdURL string, port int) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
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
	return append(args, b.args...)
}

// awaitReadyz polls /readyz until it answers 200, either process exits,
// readyTimeout passes or ctx is done.
func (u *upstreamServer) awaitReadyz(ctx context.Context, began time.Time) error {
	rc, err := u.api.restConfig()
	if err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return fmt.Errorf("creating HTTP client: %w", err)
	}
	defer closeIdle(hc)
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyzPoll)
	defer tick.Stop()
	var last error
	for {
		if last = getReadyz(ctx, hc, rc.Host); last == nil {
			u.ready = time.Since(began)
			return nil
		}
		select {
		case <-tick.C:
		case <-u.api.exited:
			return fmt.Errorf("kube-apiserver exited before it was ready (%v)%s", u.api.waitErr, u.api.stderr.excerpt())
		case <-u.etcd.exited:
			return fmt.Errorf("etcd exited before kube-apiserver was ready (%v)%s", u.etcd.waitErr, u.etcd.stderr.excerpt())
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

// Stop stops kube-apiserver, then etcd, each with SIGTERM (server.Stop).
// It is safe to call more than once.
func (u *upstreamServer) Stop() error {
	u.stopOnce.Do(func() {
		began := time.Now()
		var err error
		if u.api != nil {
			err = u.api.Stop()
		}
		u.stopErr = errors.Join(prefixErr("kube-apiserver", err), prefixErr("etcd", u.etcd.Stop()))
		u.stopped = time.Since(began)
	})
	return u.stopErr
}

func prefixErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// freePorts are n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// writeKubeconfig writes an admin kubeconfig for the kube-apiserver at
// host: the bench's CA and admin token.
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
