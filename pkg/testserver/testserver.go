package testserver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// Server is a miniapiserver running in this test process.
type Server struct {
	// Config is an admin client config for the server, without client-side
	// rate limiting (QPS -1) so tests are not throttled to client-go's default 5 QPS.
	Config *rest.Config
	// KubeconfigPath is the admin kubeconfig (for kubectl: KUBECONFIG=<path>).
	KubeconfigPath string
	// DataDir holds the server's etcd data; start another Server on it to
	// restart, after Stop: starting one on a dir in use fails the test.
	DataDir string
	// EtcdServers are the etcd client URLs the server stores objects in.
	EtcdServers []string

	logs     *serverLog
	unroute  func()
	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// Start starts a server and waits until it is ready. Without options it uses
// a fresh t.TempDir(), a free port, an embedded etcd without fsync, and the
// same defaults as the binary. The server stops when the test ends.
func Start(t testing.TB, options ...func(*server.Options)) *Server {
	t.Helper()
	logs, unroute := router.add(t)
	t.Cleanup(unroute) // also when Start fails
	opts := server.NewOptions()
	opts.DataDir = t.TempDir()
	opts.SecurePort = 0
	opts.EtcdUnsafeNoFsync = true
	for _, o := range options {
		o(opts)
	}
	cfg, err := opts.Config()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		cancel()
		cfg.Close()
		t.Fatalf("testserver: %v", err)
	}
	ts := &Server{
		Config:         rest.CopyConfig(s.Admin),
		KubeconfigPath: s.KubeconfigPath,
		DataDir:        cfg.Options.DataDir,
		EtcdServers:    s.EtcdServers,
		cancel:         cancel,
		done:           make(chan error, 1),
		logs:           logs,
		unroute:        unroute,
	}
	ts.Config.QPS = -1
	go func() {
		err := s.Run(ctx)
		// Only now is the data dir free for another server.
		ts.done <- errors.Join(err, cfg.Close())
	}()
	t.Cleanup(func() {
		if err := ts.Stop(); err != nil {
			t.Errorf("testserver: stopping: %v", err)
		}
	})
	readyCtx, readyCancel := context.WithTimeout(ctx, time.Minute)
	defer readyCancel()
	if err := s.WaitReady(readyCtx); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return ts
}

// WithCRDs installs the CustomResourceDefinitions in paths (YAML or JSON
// files, or directories of them, as envtest's CRDDirectoryPaths: a
// kubebuilder project's config/crd/bases): Start returns once they are
// Established and in discovery.
func WithCRDs(paths ...string) func(*server.Options) {
	return func(o *server.Options) { o.CRDPaths = append(o.CRDPaths, paths...) }
}

// WithGarbageCollector runs the garbage collector in the server, as
// kube-controller-manager runs it next to kube-apiserver: owner-based
// cleanup and the Foreground and Orphan propagation policies work.
func WithGarbageCollector() func(*server.Options) {
	return func(o *server.Options) { o.GarbageCollector = true }
}

// Stop shuts the server down gracefully and waits until it and its etcd have
// stopped and its data dir is free. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		s.stopErr = <-s.done
		s.unroute()
	})
	return s.stopErr
}

// LoggedErrors returns the errors the process logged through klog while
// the server ran (they also appear in the test's log).
func (s *Server) LoggedErrors() []string {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	return append([]string(nil), s.logs.errs...)
}
