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
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/miniapiserver/miniapiserver/pkg/testserver/freeport"
)

// Kind is which server a benchmark runs on; it is the value of the
// benchmarks' server= key.
type Kind string

const (
	Mini     Kind = "mini"     // miniapiserver, one process with its embedded etcd
	Upstream Kind = "upstream" // kube-apiserver and its etcd, two processes
)

// Env starts the servers of a benchmark run: miniapiserver, and
// kube-apiserver with etcd if it was given their directory. Close it when
// done: it removes its root dir.
type Env struct {
	root     string
	mini     string   // the miniapiserver binary
	miniArgs []string // flags for every miniapiserver start
	upstream *upstreamBinaries
	pki      *upstreamPKI // nil without upstream

	// Version is each kind's first line of --version.
	Version map[Kind]string
	// UserToken is the bearer token of the user User, which the file
	// UserTokenFile authenticates on miniapiserver (--token-auth-file) and
	// kube-apiserver's token file authenticates too.
	UserToken     string
	UserTokenFile string

	mu      sync.Mutex
	running map[*Server]bool // started and not yet stopped, for WaitIdle
}

// User is the one user besides the admin that the servers authenticate.
const User = "bench-user"

// NewEnv checks the binaries and makes a root dir; with upstreamDir ("":
// none), the PKI that kube-apiserver starts share.
func NewEnv(ctx context.Context, mini string, miniArgs []string, upstreamDir string, upstreamArgs []string) (*Env, error) {
	root, err := os.MkdirTemp("", "miniapiserver-bench-")
	if err != nil {
		return nil, err
	}
	e := &Env{root: root, miniArgs: miniArgs, Version: map[Kind]string{}, running: map[*Server]bool{}}
	if err := e.init(ctx, mini, upstreamDir, upstreamArgs); err != nil {
		return nil, errors.Join(err, os.RemoveAll(root))
	}
	return e, nil
}

func (e *Env) init(ctx context.Context, mini, upstreamDir string, upstreamArgs []string) error {
	var err error
	if e.mini, err = filepath.Abs(mini); err != nil {
		return err
	}
	if e.Version[Mini], err = binaryVersion(ctx, e.mini); err != nil {
		return err
	}
	token := "bench-user-token"
	if upstreamDir != "" {
		if e.upstream, err = findUpstream(ctx, upstreamDir, upstreamArgs); err != nil {
			return err
		}
		e.Version[Upstream] = e.upstream.apiserverVersion
		if e.pki, err = newUpstreamPKI(filepath.Join(e.root, "upstream-pki")); err != nil {
			return err
		}
		token = e.pki.userToken
	}
	e.UserToken, e.UserTokenFile = token, filepath.Join(e.root, "user-token.csv")
	return os.WriteFile(e.UserTokenFile, []byte(token+","+User+","+User+"\n"), 0o600)
}

// Kinds are Mini, then Upstream if the env has it.
func (e *Env) Kinds() []Kind {
	if e.upstream == nil {
		return []Kind{Mini}
	}
	return []Kind{Mini, Upstream}
}

// Dir is a path under the env's root dir, not yet created.
func (e *Env) Dir(name string) string { return filepath.Join(e.root, name) }

// Close removes the root dir and everything under it.
func (e *Env) Close() error { return os.RemoveAll(e.root) }

// Server is one running API server: a miniapiserver, or a kube-apiserver
// with the etcd it stores in.
type Server struct {
	Kind    Kind
	DataDir string
	// Ready is from the exec (etcd's, for upstream) to ready: miniapiserver's
	// ready line, or kube-apiserver's first 200 from /readyz. After
	// Restart, of the restarted process.
	Ready time.Duration
	// Stopped is Stop's time from SIGTERM to exit (kube-apiserver's, then
	// etcd's).
	Stopped time.Duration

	env     *Env
	args    []string
	port    int // the API server's, kept across Restart
	api     *process
	etcd    *process // upstream only
	etcdURL string   // upstream only
	rc      *rest.Config
	client  *kubernetes.Clientset
	stopped bool
}

// Start starts a server of kind on dataDir (created if need be) on free
// loopback ports and waits until it is ready. args are extra flags of the
// API server; both understand --watch-cache and --feature-gates. The
// namespace "default" exists when it returns.
func (e *Env) Start(ctx context.Context, kind Kind, dataDir string, args ...string) (*Server, error) {
	var ports []int
	for range 3 {
		port, err := freeport.On("127.0.0.1")
		if err != nil {
			return nil, err
		}
		ports = append(ports, port)
	}
	s := &Server{Kind: kind, DataDir: dataDir, env: e, args: args, port: ports[0]}
	var err error
	switch kind {
	case Mini:
		err = s.startMini(ctx)
	case Upstream:
		if e.upstream == nil {
			return nil, errors.New("no kube-apiserver: the env was made without its directory")
		}
		err = s.startUpstream(ctx, ports[1], ports[2])
	default:
		return nil, fmt.Errorf("unknown server kind %q", kind)
	}
	if err == nil {
		err = s.connect(ctx)
	}
	if err != nil {
		if s.api != nil || s.etcd != nil {
			err = errors.Join(err, s.Stop())
		}
		return nil, fmt.Errorf("%s on %s: %w", kind, dataDir, err)
	}
	e.mu.Lock()
	e.running[s] = true
	e.mu.Unlock()
	return s, nil
}

// miniArgs are miniapiserver's flags: no namespace defaults, as
// kube-apiserver runs without kube-controller-manager, and the LISTs count
// what they create.
func (s *Server) miniArgs() []string {
	args := []string{"--data-dir", s.DataDir, "--secure-port", strconv.Itoa(s.port), "--namespace-defaults=false"}
	args = append(args, s.env.miniArgs...)
	return append(args, s.args...)
}

func (s *Server) startMini(ctx context.Context) error {
	began := time.Now()
	p, line, err := launchUntilReady(ctx, s.env.mini, s.miniArgs())
	if p != nil && !p.hasExited() {
		s.api = p
	}
	if err != nil {
		return err
	}
	s.Ready = time.Since(began)
	_, path, ok := strings.Cut(line, "KUBECONFIG=")
	if !ok || strings.TrimSpace(path) == "" {
		return fmt.Errorf("no KUBECONFIG=... in the ready line %q", line)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", strings.TrimSpace(path))
	if err != nil {
		return err
	}
	s.rc = rc
	return nil
}

// connect makes the admin client, and the namespace default on upstream,
// which kube-apiserver's own controller may not have made yet.
func (s *Server) connect(ctx context.Context) error {
	s.rc.QPS, s.rc.Burst, s.rc.Timeout = -1, 1000, 5*time.Minute
	var err error
	if s.client, err = kubernetes.NewForConfig(s.rc); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	return nil
}

// RESTConfig is a copy of the admin client config: no rate limit, a
// 5-minute timeout.
func (s *Server) RESTConfig() *rest.Config { return rest.CopyConfig(s.rc) }

// Client is the admin clientset, on connections shared with every client
// of the same config.
func (s *Server) Client() *kubernetes.Clientset { return s.client }

// OwnClient is an admin clientset on connections of its own, without a
// request timeout, for watches that stream as long as a run takes. Release
// it with CloseIdle.
func (s *Server) OwnClient() (*kubernetes.Clientset, *http.Client, error) {
	rc := s.RESTConfig()
	rc.Timeout = 0
	return OwnClient(rc)
}

// PIDs are the server's processes.
func (s *Server) PIDs() []int {
	pids := []int{s.api.cmd.Process.Pid}
	if s.etcd != nil {
		pids = append(pids, s.etcd.cmd.Process.Pid)
	}
	return pids
}

// CPU is the user plus system CPU time the server's processes have used so
// far (Linux only).
func (s *Server) CPU() (time.Duration, error) {
	var total time.Duration
	for _, pid := range s.PIDs() {
		t, err := processCPU(pid)
		if err != nil {
			return 0, err
		}
		total += t
	}
	return total, nil
}

// Stop stops the server with SIGTERM (kube-apiserver, then etcd), killing
// what is still running after stopTimeout. It is safe to call more than
// once.
func (s *Server) Stop() error { return s.StopWithin(stopTimeout) }

// StopWithin is Stop, killing after limit.
func (s *Server) StopWithin(limit time.Duration) error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	s.env.mu.Lock()
	delete(s.env.running, s)
	s.env.mu.Unlock()
	began := time.Now()
	var err error
	if s.api != nil {
		err = s.api.stop(limit)
	}
	if s.etcd != nil {
		err = errors.Join(prefixErr(string(s.Kind), err), prefixErr("etcd", s.etcd.stop(limit)))
	}
	s.Stopped = time.Since(began)
	closeIdle(s.rc)
	return err
}

// Restart starts the API server again on the same data dir, port and
// flags, after Stop; kube-apiserver's etcd keeps running throughout. Ready
// is then the new process's.
func (s *Server) Restart(ctx context.Context) error {
	if s.api == nil || !s.api.hasExited() {
		return errors.New("restart of a running server")
	}
	s.stopped = false
	var err error
	switch s.Kind {
	case Mini:
		s.api = nil
		err = s.startMini(ctx)
	case Upstream:
		err = s.restartAPI(ctx)
	}
	if err == nil {
		err = s.connect(ctx)
	}
	s.env.mu.Lock()
	s.env.running[s] = true
	s.env.mu.Unlock()
	return err
}

// StopAPI stops the API server only, with SIGTERM (for Restart):
// kube-apiserver's etcd keeps running.
func (s *Server) StopAPI() error { return s.StopAPIWithin(stopTimeout) }

// StopAPIWithin is StopAPI, killing after limit: kube-apiserver's HTTP
// server waits for open watches up to its --request-timeout, a minute.
func (s *Server) StopAPIWithin(limit time.Duration) error {
	began := time.Now()
	err := s.api.stop(limit)
	s.Stopped = time.Since(began)
	closeIdle(s.rc)
	return err
}

func prefixErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// OwnClient is a clientset with an HTTP client, and so connections, of its
// own: client-go shares one transport between configs with equal TLS
// settings unless their Dial funcs differ. Release it with CloseIdle.
func OwnClient(rc *rest.Config) (*kubernetes.Clientset, *http.Client, error) {
	c := rest.CopyConfig(rc)
	c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, nil, fmt.Errorf("creating HTTP client: %w", err)
	}
	client, err := kubernetes.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, nil, fmt.Errorf("creating client: %w", err)
	}
	return client, hc, nil
}

// CloseIdle closes the idle connections of an HTTP client made by
// rest.HTTPClientFor, through client-go's round-tripper wrappers.
func CloseIdle(c *http.Client) { utilnet.CloseIdleConnectionsFor(c.Transport) }

// closeIdle closes the idle connections client-go keeps for rc's transport.
func closeIdle(rc *rest.Config) {
	if rc == nil {
		return
	}
	if hc, err := rest.HTTPClientFor(rc); err == nil {
		CloseIdle(hc)
	}
}

// binaryVersion is the first line of what the binary's --version prints,
// e.g. "miniapiserver v1.37.2".
func binaryVersion(ctx context.Context, path string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// WithArgs is args and more, in a new slice.
func WithArgs(args []string, more ...string) []string { return append(slices.Clone(args), more...) }
