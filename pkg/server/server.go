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

package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	storagefactory "k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/server/apis"
	"github.com/miniapiserver/miniapiserver/pkg/server/controls"
	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	"github.com/miniapiserver/miniapiserver/pkg/server/manifests"
	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/peers"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/testcontrols"
)

// Server is a running miniapiserver.
type Server struct {
	generic *genericapiserver.GenericAPIServer
	// crdInformers are the apiextensions-apiserver's (in process, see
	// apiextensions.New).
	crdInformers apiextensionsinformers.SharedInformerFactory
	openAPI      *openapi.Server
	etcd         *storage.Etcd
	// storages are destroyed in the background when the server stops.
	storages *serverstorage.Storages
	// Admin is a client config for the admin user (what the kubeconfig holds).
	Admin *rest.Config
	// KubeconfigPath is the admin kubeconfig written in the data dir.
	KubeconfigPath string
	// EtcdServers are the etcd client URLs the server stores objects in.
	EtcdServers []string
	// userCA is the data dir's CA, which UserConfig signs with (nil
	// without a data dir).
	userCA *datadir.Credentials
	// crds are the CRDs WaitReady installs (read from Options.CRDPaths).
	crds []*apiextensionsv1.CustomResourceDefinition
	// webhooks are the webhook configurations WaitReady installs, and
	// what admission sees of them.
	webhooks manifests.Webhooks
	// ready closes admissionchain.Config.Ready.
	ready func()
	// testControls are nil unless Options.TestControls.
	testControls *controls.Controls
	// releaseGates lets other servers in the process have other feature
	// gates once this one has stopped (features.Hold).
	releaseGates func()
}

// New starts etcd (unless external servers are configured) and builds the API server.
// Run serves it, and stops what New started, the hold on the process's feature
// gates included (features.Hold); if New fails, everything it started is stopped.
func (c CompletedConfig) New(ctx context.Context) (s *Server, err error) {
	o := c.Options
	servers := o.EtcdServers
	var etcd *storage.Etcd
	if len(servers) == 0 {
		etcd, err = storage.StartEtcd(ctx, storage.EtcdConfig{
			Dir:                    filepath.Join(o.DataDir, "etcd"),
			ProgressNotifyInterval: o.EtcdProgressNotifyInterval,
			UnsafeNoFsync:          o.EtcdUnsafeNoFsync,
		})
		if err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				etcd.Close()
			}
		}()
		servers = []string{etcd.URL()}
	}
	backend := storage.Backend{
		Servers: servers, Prefix: o.EtcdPrefix,
		CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile,
		CompactionInterval: o.EtcdCompactionInterval,
	}.Config()
	if etcd == nil {
		if err := waitForEtcd(ctx, backend, etcdReachTimeout); err != nil {
			return nil, err
		}
	}

	releaseGates, err := features.Hold()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			releaseGates()
		}
	}()
	crds, err := o.crdsToInstall()
	if err != nil {
		return nil, err
	}
	storageOpts := serverstorage.Options{WatchCache: o.WatchCache, WatchCacheHistoryWindow: o.WatchCacheHistoryWindow, WatchCacheHistorySize: o.WatchCacheHistorySize}
	var faults *testcontrols.Faults
	if o.TestControls {
		faults = testcontrols.NewFaults(nil)
		storageOpts.Faults = faults
	}
	storages, err := serverstorage.New(storageOpts)
	if err != nil {
		return nil, err
	}
	defer func() { // after the storages are destroyed, before etcd stops
		if err != nil {
			storages.WaitDestroyed()
		}
	}()
	var tc *controls.Controls
	if o.TestControls {
		if tc, err = controls.Start(ctx, controls.Config{Backend: backend, Storages: storages, Faults: faults}); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				tc.Stop()
			}
		}()
	}
	// The admission plugins' informers and workers stop with the loopback
	// clients (see end-watches), or when New fails.
	admissionDone := make(chan struct{})
	stopAdmission := sync.OnceFunc(func() { close(admissionDone) })
	// Closed once the server is ready and its OpenAPI built (see Run).
	ready := make(chan struct{})
	defer func() {
		if err != nil {
			stopAdmission()
		}
	}()
	parts, err := c.genericConfig(ctx, backend, storages, faults, admissionDone, ready)
	if err != nil {
		return nil, err
	}
	if tc != nil {
		tc.SetNamespaces(parts.factory.Core().V1().Namespaces().Lister())
	}
	// Tokens the other servers on the etcd sign authenticate here too.
	stopKeyring := func() {}
	if !parts.peers.Embedded() {
		if stopKeyring, err = peers.StartKeyring(ctx, backend, parts.peers.Name(), parts.serviceAccounts); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				stopKeyring()
			}
		}()
	}
	gc := parts.config
	// CRDs and custom resources: the apiextensions-apiserver, which the
	// core server delegates to (kube-apiserver chains them so too).
	inProcess := &serving.InProcess{}
	// The initial events of watches are written from kept encodings too.
	encodings := storages.Encodings()
	var events *encoding.EventWriter
	if encodings != nil {
		events = encoding.NewEventWriter(encoding.WithCachedListEncoding(api.Codecs, encodings), api.Scheme)
		encodings.SetEventWriter(events)
	}
	lists := encoding.NewCustomResourceLists(encodings, events, time.Duration(gc.MinRequestTimeout)*time.Second)
	ext, err := apiextensions.New(apiextensions.Config{Core: gc, Loopback: inProcess, Services: o.WebhookServices, Lists: lists})
	if err != nil {
		return nil, err
	}
	generic, err := gc.Complete(nil).New("miniapiserver", lists.Delegate(ext.CustomResourceDefinitions))
	if err != nil {
		ext.GenericAPIServer.Destroy()
		return nil, err
	}
	inProcess.SetHandler(generic.Handler)
	parts.server.Store(generic)
	defer func() {
		if err != nil {
			generic.Destroy()
		}
	}()
	installed, err := apis.Install(apis.Config{Server: generic, RESTOptionsGetter: gc.RESTOptionsGetter, Encodings: encodings,
		Identity:      apis.Identity{Authorizer: gc.Authorization.Authorizer, Rules: gc.RuleResolver, Tokens: parts.tokens, ServiceAccounts: parts.serviceAccounts},
		ServiceRanges: o.ServiceRanges, Kubelet: o.Kubelet.config(), Etcd: *backend})
	if err != nil {
		return nil, err
	}
	namespaced, services := installed.Namespaced, installed.Services
	if tc != nil {
		if err := tc.Install(generic); err != nil {
			return nil, err
		}
	}
	openAPI := openapi.New(generic, ext.OpenAPI(), gc.OpenAPIConfig, gc.OpenAPIV3Config)
	if err := ext.Serve(generic, openAPI); err != nil {
		return nil, err
	}
	crdLister := ext.Informers.Apiextensions().V1().CustomResourceDefinitions().Lister()
	namespacedNow := func() []schema.GroupVersionResource {
		return append(slices.Clone(namespaced), apiextensions.CustomResources(crdLister)...)
	}
	// /readyz waits for the watch caches' initial lists, as kube-apiserver's does.
	generic.AddPostStartHookOrDie("storage-readiness", generic.StorageReadinessHook.Hook)
	stopLoopbackClients, err := addLoopbackClients(loopbackClients{generic: generic, factory: parts.factory, buildAdmission: parts.admission.Build,
		port: c.port(), loopback: gc.LoopbackClientConfig, admin: c.Admin, rootCA: c.Serving.ServingCA, clientCA: c.Serving.ClientCA, signingCA: c.userCA, namespaced: namespacedNow,
		controllers: o.Controllers, ranges: o.ServiceRanges, services: services, peers: parts.peers})
	if err != nil {
		return nil, err
	}
	// On shutdown the server's own clients stop first (their watches would
	// come straight back), then every watch ends at once, after the caches'
	// final bookmarks, instead of holding the HTTP server's shutdown until
	// it times out. (Pre-shutdown hooks run in no set order: this is one.)
	generic.AddPreShutdownHookOrDie("end-watches", func() error {
		stopAdmission()
		stopLoopbackClients()
		storages.Shutdown(context.Background())
		stopKeyring()
		return nil
	})

	if c.KubeconfigPath != "" {
		if err := datadir.WriteKubeconfig(c.KubeconfigPath, c.Admin); err != nil {
			return nil, err
		}
	}
	return &Server{generic: generic, crdInformers: ext.Informers, openAPI: openAPI, etcd: etcd, storages: storages, Admin: c.Admin, KubeconfigPath: c.KubeconfigPath, EtcdServers: servers, userCA: c.userCA, crds: crds,
		webhooks: manifests.Webhooks{Mutating: o.MutatingWebhooks, Validating: o.ValidatingWebhooks, Seen: parts.factory.Admissionregistration().V1()},
		ready:    sync.OnceFunc(func() { close(ready) }), testControls: tc, releaseGates: releaseGates}, nil
}

// etcdReachTimeout bounds how long New waits for --etcd-servers to
// answer, and then stops, saying so (kube-apiserver waits 20s). Not less:
// kwokctl starts etcd and kube-apiserver at the same moment.
const etcdReachTimeout = 5 * time.Second

// waitForEtcd waits until etcd answers k8s.io/apiserver's health check (as
// /healthz's etcd check), for up to timeout. (The check blocks while its
// client connects, which it may do for 20s: it runs in the background.)
func waitForEtcd(ctx context.Context, backend *storagebackend.Config, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	health, err := storagefactory.CreateHealthCheck(*backend, ctx.Done())
	if err != nil {
		return fmt.Errorf("--etcd-servers: %w", err)
	}
	healthy := make(chan error, 1)
	go func() {
		defer utilruntime.HandleCrash()
		healthy <- wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return health() == nil, nil
		})
	}()
	select {
	case err = <-healthy:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("--etcd-servers %s: etcd does not answer within %s", strings.Join(backend.Transport.ServerList, ","), timeout)
	}
	return nil
}

// watchDrainTimeout bounds how long shutdown waits for the watch handlers
// to return once it has ended their watches.
const watchDrainTimeout = 5 * time.Second

// crdSyncTimeout bounds Run's wait for the CRD informer before serving.
const crdSyncTimeout = 5 * time.Second

// Run serves until ctx is cancelled, then shuts down gracefully and stops etcd.
func (s *Server) Run(ctx context.Context) error {
	defer func() {
		s.storages.WaitDestroyed()
		if s.testControls != nil {
			s.testControls.Stop()
		}
		if s.etcd != nil {
			s.etcd.Close()
		}
		s.releaseGates()
	}()
	// apiextensions-apiserver's readiness check ("crd-informer-synced")
	// looks at its CRD informer as soon as the server listens, then every
	// 100 ms. The informer lists and watches in process (its post-start
	// hook's Start does nothing more), so it can sync before that. (If it
	// can't within crdSyncTimeout, the server serves all the same, and
	// /readyz says what it waits for.)
	s.crdInformers.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, crdSyncTimeout)
	s.crdInformers.WaitForCacheSync(syncCtx.Done())
	cancel()
	// The OpenAPI v3 is built once the server is ready: its CPU would slow
	// the start (requests for it wait until it is built). Then the
	// admission plugins may read it (see admissionchain.Config.Ready).
	go func() {
		if s.pollReady(ctx) == nil {
			s.openAPI.BuildV3()
			s.ready()
		}
	}()
	return s.generic.PrepareRun().RunWithContext(ctx)
}

// Serve builds the server of cfg, runs it until ctx ends, and calls ready
// once it is ready; a server that does not get ready (a CRD that is not
// valid, say) stops. A signal while starting is a graceful stop too:
// whatever failed because of it is no error. The caller owns cfg.
func Serve(ctx context.Context, cfg *Config, ready func(*Server)) error {
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	if err := s.WaitReady(ctx); err != nil {
		stop()
		runErr := <-done
		if ctx.Err() != nil {
			return runErr
		}
		return errors.Join(err, runErr)
	}
	ready(s)
	return <-done
}

// pollReady polls /readyz until it answers 200 or ctx ends.
func (s *Server) pollReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(finishing(s.Admin))
	if err != nil {
		return err
	}
	var lastErr error
	err = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, lastErr = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return lastErr == nil, nil
	})
	if err != nil {
		return fmt.Errorf("server not ready: %w (last /readyz error: %v)", err, lastErr)
	}
	return nil
}

// CRDs are the CRDs the server installs on start (Options.CRDPaths' and
// CRDs, pointed at Options.ConversionWebhook), as it read them.
func (s *Server) CRDs() []*apiextensionsv1.CustomResourceDefinition {
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(s.crds))
	for i, crd := range s.crds {
		out[i] = crd.DeepCopy()
	}
	return out
}

// WaitReady polls /readyz until it answers 200 or ctx ends, then installs
// the CRDs of Options.CRDPaths and waits until they are served.
func (s *Server) WaitReady(ctx context.Context) error {
	if err := s.pollReady(ctx); err != nil {
		return err
	}
	if err := manifests.InstallCRDs(ctx, s.Admin, s.crds); err != nil {
		return err
	}
	if err := s.webhooks.Install(ctx, s.Admin); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Server ready", "address", s.Admin.Host)
	return nil
}
