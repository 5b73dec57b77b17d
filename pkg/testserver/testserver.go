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

package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/admission/serviceaccount"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/admissionchain"
	"github.com/miniapiserver/miniapiserver/pkg/server/controllers"
)

// policyRefresh is how often the admission policy plugins look for new or
// changed policies in a test server: kube-apiserver's every second would
// make each test that installs a policy wait up to a second for it.
const policyRefresh = 20 * time.Millisecond

// fastPolicies sets policyRefresh, once a test server starts: it is
// k8s.io/apiserver's, for the whole process.
var fastPolicies = sync.OnceFunc(func() { generic.SetPolicyRefreshIntervalForTests(policyRefresh) })

// Server is a miniapiserver running in this process.
type Server struct {
	// Config is an admin client config for the server, without client-side
	// rate limiting (QPS -1) so tests are not throttled to client-go's default 5 QPS.
	Config *rest.Config
	// KubeconfigPath is the admin kubeconfig (for kubectl: KUBECONFIG=<path>).
	KubeconfigPath string
	// DataDir holds the server's etcd data; start another Server on it to
	// restart, after Stop: starting one on a dir in use fails.
	DataDir string
	// EtcdServers are the etcd client URLs the server stores objects in.
	EtcdServers []string

	server   *server.Server
	logs     *serverLog
	unroute  func()
	cancel   context.CancelFunc
	done     chan error
	cleanup  func() // removes a data dir New made
	stopOnce sync.Once
	stopErr  error
}

// Start starts a server and waits until it is ready. Without options it uses
// a fresh t.TempDir(), a free port, an embedded etcd without fsync, and the
// same defaults as the binary. Its logs go to t (see LogsEnv), and it stops
// when the test ends.
func Start(t testing.TB, options ...func(*server.Options)) *Server {
	t.Helper()
	dir := t.TempDir()
	s, err := start(newServerLog(t.Log), append([]func(*server.Options){func(o *server.Options) { o.DataDir = dir }}, options...))
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("testserver: stopping: %v", err)
		}
	})
	return s
}

// New starts a server and waits until it is ready, as Start does, for
// code with no testing.TB: TestMain, or a Ginkgo BeforeSuite. Its data
// dir is a new temporary directory (unless an option sets one), removed
// by Stop; its errors are written to stderr. Call Stop when done.
func New(options ...func(*server.Options)) (*Server, error) {
	dir, err := os.MkdirTemp("", "miniapiserver-")
	if err != nil {
		return nil, fmt.Errorf("testserver: %w", err)
	}
	s, err := start(newServerLog(nil), append([]func(*server.Options){func(o *server.Options) { o.DataDir = dir }}, options...))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testserver: %w", err)
	}
	if s.DataDir == dir {
		s.cleanup = func() { os.RemoveAll(dir) }
	} else {
		os.Remove(dir) // an option chose another; ours is still empty
	}
	return s, nil
}

// start runs a server whose logs go to logs, and waits until it is ready.
func start(logs *serverLog, options []func(*server.Options)) (*Server, error) {
	fastPolicies()
	unroute := router.add(logs)
	opts := server.NewOptions()
	opts.SecurePort = 0
	opts.EtcdUnsafeNoFsync = true
	opts.TestControls = true
	// As envtest, which runs no kube-controller-manager, and so no
	// ServiceAccount admission (it would refuse every Pod for want of a
	// "default" ServiceAccount): see WithNamespaceDefaults.
	opts.Controllers = []string{"-" + controllers.ServiceAccount, "-" + controllers.RootCAPublisher, "*"}
	opts.DisableAdmissionPlugins = []string{serviceaccount.PluginName}
	for _, o := range options {
		o(opts)
	}
	cfg, err := opts.Config()
	if err != nil {
		unroute()
		return nil, err
	}
	// The server logs through this context's logger where it can say which
	// server a line is about; those lines reach this server's test only.
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logs.logger()))
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		cancel()
		cfg.Close()
		unroute()
		return nil, err
	}
	ts := &Server{
		Config:         rest.CopyConfig(s.Admin),
		KubeconfigPath: s.KubeconfigPath,
		DataDir:        cfg.Options.DataDir,
		EtcdServers:    s.EtcdServers,
		server:         s,
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
	readyCtx, readyCancel := context.WithTimeout(ctx, time.Minute)
	defer readyCancel()
	if err := s.WaitReady(readyCtx); err != nil {
		if readyCtx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w\nthe goroutines in post-start hooks and creates:\n%s", err, startingStacks())
		}
		return nil, errors.Join(err, ts.Stop())
	}
	return ts, nil
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
	return func(o *server.Options) {
		o.GarbageCollection = true
		o.Controllers = append([]string{controllers.GarbageCollector}, o.Controllers...)
	}
}

// WithNamespaceDefaults gives every namespace a "default" ServiceAccount
// and the "kube-root-ca.crt" ConfigMap, as a cluster's
// kube-controller-manager does, and turns ServiceAccount admission on, as
// in a cluster: a Pod gets the "default" ServiceAccount and its token
// volume (the binary does all this by default; an in-process server, like
// envtest's kube-apiserver, does not unless asked).
func WithNamespaceDefaults() func(*server.Options) {
	return func(o *server.Options) {
		o.Controllers = append([]string{controllers.ServiceAccount, controllers.RootCAPublisher}, o.Controllers...)
		o.DisableAdmissionPlugins = slices.DeleteFunc(o.DisableAdmissionPlugins, func(p string) bool { return p == serviceaccount.PluginName })
	}
}

// WithWebhookService makes webhooks (admission and CRD conversion) and
// APIServices that refer to port of Service namespace/name call address
// (host:port), there being no Service network; the server's certificate
// must name the Service (name.namespace.svc), as in a cluster.
func WithWebhookService(namespace, name string, port int32, address string) func(*server.Options) {
	return func(o *server.Options) {
		if o.WebhookServices == nil {
			o.WebhookServices = admissionchain.ServiceAddresses{}
		}
		o.WebhookServices[admissionchain.ServiceKey(namespace, name, port)] = address
	}
}

// Stop shuts the server down gracefully and waits until it and its etcd have
// stopped and its data dir is free (and removed, if New made it). It is
// safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		s.stopErr = <-s.done
		s.unroute()
		if s.cleanup != nil {
			s.cleanup()
		}
	})
	return s.stopErr
}

// CRDs are the CRDs the server installed on start (WithCRDs' and
// Options.CRDs), as it read them.
func (s *Server) CRDs() []*apiextensionsv1.CustomResourceDefinition { return s.server.CRDs() }

// AddUser returns a client config for user name in groups, authenticated
// by a client certificate the server trusts (envtest's AddUser). The user
// may do what RBAC allows it: bind roles to it, or to one of its groups
// (system:masters may do anything).
func (s *Server) AddUser(name string, groups ...string) (*rest.Config, error) {
	cfg, err := s.server.UserConfig(name, groups...)
	if err != nil {
		return nil, err
	}
	cfg.QPS = -1
	return cfg, nil
}

// ServiceAccountConfig returns a client config authenticated by a token
// of ServiceAccount namespace/name (made if missing), as a Pod running as
// it has: user system:serviceaccount:NAMESPACE:NAME in the groups
// system:serviceaccounts, system:serviceaccounts:NAMESPACE and
// system:authenticated, allowed what RBAC grants it. The token lasts an
// hour, and stops working once the ServiceAccount is deleted.
func (s *Server) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return nil, err
	}
	accounts := client.CoreV1().ServiceAccounts(namespace)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := accounts.Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	tr, err := accounts.CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(s.Config)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// LoggedErrors returns the errors logged about this server while it ran
// (they also appear in its test's log).
func (s *Server) LoggedErrors() []string {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	return append([]string(nil), s.logs.errs...)
}
