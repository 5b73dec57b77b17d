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
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	discoveryendpoint "k8s.io/apiserver/pkg/endpoints/discovery/aggregated"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	storagefactory "k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/controller/clusterroleaggregation"
	"github.com/miniapiserver/miniapiserver/pkg/controller/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/controller/namespacedefaults"
	"github.com/miniapiserver/miniapiserver/pkg/features"
	generatedopenapi "github.com/miniapiserver/miniapiserver/pkg/generated/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/version"
)

// Config is what New needs: validated options, the serving listener and the
// credentials. It holds the data dir's lock until Close.
type Config struct {
	Options  Options
	Listener net.Listener
	creds    *datadir.Credentials
	lock     *datadir.Lock
	// KubeconfigPath is where New writes the admin kubeconfig.
	KubeconfigPath string
}

// Config validates o, creates and locks the data dir, and creates the
// credentials and the listener. The caller owns the result: Close it once
// the server's Run has returned, or when New fails.
func (o *Options) Config() (c *Config, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating --data-dir: %w", err)
	}
	// It holds keys and the admin token: private even if it existed before.
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	lock, err := datadir.TakeLock(dataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Release()
		}
	}()
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if ip := net.ParseIP(o.BindAddress); !ip.IsUnspecified() && !ip.IsLoopback() {
		hosts = append(hosts, o.BindAddress)
	}
	creds, err := datadir.LoadOrCreateCredentials(dataDir, hosts)
	if err != nil {
		return nil, fmt.Errorf("preparing credentials: %w", err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("listening on %s:%d: %w", o.BindAddress, o.SecurePort, err)
	}
	opts := *o
	opts.DataDir = dataDir
	return &Config{Options: opts, Listener: l, creds: creds, lock: lock, KubeconfigPath: datadir.KubeconfigPath(dataDir)}, nil
}

// Close closes the listener (unless the server already did) and releases the
// data dir for the next server. It is safe to call more than once.
func (c *Config) Close() error {
	err := c.Listener.Close()
	c.lock.Release()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

type completedConfig struct {
	*Config
	// generic is the generic API server New builds, once it has.
	generic atomic.Pointer[genericapiserver.GenericAPIServer]
	// Admin is a client config with the admin token, as written to the kubeconfig.
	Admin *rest.Config
	// serviceAccounts issues and checks service account tokens, and tokens
	// authenticates every bearer token (TokenReview asks it); genericConfig
	// makes them.
	serviceAccounts *auth.ServiceAccountTokens
	tokens          authenticator.Token
}

// CompletedConfig can only be made by Complete.
type CompletedConfig struct {
	*completedConfig
}

// Complete derives the client configs from the listener's address.
func (c *Config) Complete() CompletedConfig {
	host := c.Options.BindAddress
	if ip := net.ParseIP(host); ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	port := c.Listener.Addr().(*net.TCPAddr).Port
	admin := &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		BearerToken:     c.creds.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.creds.CACert},
	}
	return CompletedConfig{&completedConfig{Config: c, Admin: admin}}
}

// Server is a running miniapiserver.
type Server struct {
	generic *genericapiserver.GenericAPIServer
	// crdInformers are the apiextensions-apiserver's (in process, see
	// newAPIExtensions).
	crdInformers apiextensionsinformers.SharedInformerFactory
	openAPI      *openAPI
	etcd         *storage.Etcd
	// storages are destroyed in the background when the server stops.
	storages *serverstorage.Storages
	// Admin is a client config for the admin user (what the kubeconfig holds).
	Admin *rest.Config
	// KubeconfigPath is the admin kubeconfig written in the data dir.
	KubeconfigPath string
	// EtcdServers are the etcd client URLs the server stores objects in.
	EtcdServers []string
	// creds are the data dir's CA and tokens (UserConfig signs with its CA).
	creds *datadir.Credentials
	// crds are the CRDs WaitReady installs (read from Options.CRDPaths).
	crds []*apiextensionsv1.CustomResourceDefinition
	// webhooks are the webhook configurations WaitReady installs, and
	// what admission sees of them.
	webhooks webhookConfigurations
	// ready closes the channel openAPIAfter waits on.
	ready func()
}

// New starts etcd (unless external servers are configured) and builds the API server.
// Run serves it; if New fails, everything it started is stopped.
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

	if err := features.SyncUpstream(); err != nil {
		return nil, err
	}
	crds, err := readCRDs(o.CRDPaths)
	if err != nil {
		return nil, err
	}
	for _, crd := range o.CRDs {
		crds = append(crds, crd.DeepCopy())
	}
	setConversionWebhooks(crds, o.ConversionWebhook)
	storages, err := serverstorage.New(serverstorage.Options{WatchCache: o.WatchCache, WatchCacheHistoryWindow: o.WatchCacheHistoryWindow, WatchCacheHistorySize: o.WatchCacheHistorySize})
	if err != nil {
		return nil, err
	}
	defer func() { // after the storages are destroyed, before etcd stops
		if err != nil {
			storages.WaitDestroyed()
		}
	}()
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
	gc, factory, admission, err := c.genericConfig(ctx, backend, storages, admissionDone, ready)
	if err != nil {
		return nil, err
	}
	// CRDs and custom resources: the apiextensions-apiserver, which the
	// core server delegates to (kube-apiserver chains them so too).
	inProcess := &inProcess{}
	// The initial events of watches are written from kept encodings too.
	encodings := storages.Encodings()
	var events *encoding.EventWriter
	if encodings != nil {
		events = encoding.NewEventWriter(encoding.WithCachedListEncoding(api.Codecs, encodings), api.Scheme)
		encodings.SetEventWriter(events)
	}
	lists := encoding.NewCustomResourceLists(encodings, events, time.Duration(gc.MinRequestTimeout)*time.Second)
	ext, err := newAPIExtensions(gc, gc.RESTOptionsGetter.(storage.RESTOptionsGetter), inProcess, o.WebhookServices, lists)
	if err != nil {
		return nil, err
	}
	generic, err := gc.Complete(nil).New("miniapiserver", lists.Delegate(ext.CustomResourceDefinitions))
	if err != nil {
		ext.GenericAPIServer.Destroy()
		return nil, err
	}
	inProcess.setHandler(generic.Handler)
	c.generic.Store(generic)
	defer func() {
		if err != nil {
			generic.Destroy()
		}
	}()
	namespaced, err := installAPIs(generic, gc.RESTOptionsGetter, encodings,
		identity{authorizer: gc.Authorization.Authorizer, rules: gc.RuleResolver, tokens: c.tokens, serviceAccounts: c.serviceAccounts})
	if err != nil {
		return nil, err
	}
	openAPI := newOpenAPI(generic, ext, gc.OpenAPIConfig, gc.OpenAPIV3Config)
	if err := serveAPIExtensions(generic, ext, openAPI); err != nil {
		return nil, err
	}
	crdLister := ext.Informers.Apiextensions().V1().CustomResourceDefinitions().Lister()
	namespacedNow := func() []schema.GroupVersionResource {
		return append(slices.Clone(namespaced), customResources(crdLister)...)
	}
	// /readyz waits for the watch caches' initial lists, as kube-apiserver's does.
	generic.AddPostStartHookOrDie("storage-readiness", generic.StorageReadinessHook.Hook)
	stopLoopbackClients, err := addLoopbackClients(generic, factory, admission.build, c.Listener.Addr().(*net.TCPAddr).Port, gc.LoopbackClientConfig, c.Admin, c.creds.CACert, namespacedNow, o.GarbageCollector, o.NamespaceDefaults)
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
		return nil
	})

	if err := datadir.WriteKubeconfig(c.KubeconfigPath, c.Admin); err != nil {
		return nil, err
	}
	return &Server{generic: generic, crdInformers: ext.Informers, openAPI: openAPI, etcd: etcd, storages: storages, Admin: c.Admin, KubeconfigPath: c.KubeconfigPath, EtcdServers: servers, creds: c.creds, crds: crds,
		webhooks: webhookConfigurations{mutating: o.MutatingWebhooks, validating: o.ValidatingWebhooks, seen: factory.Admissionregistration().V1()},
		ready:    sync.OnceFunc(func() { close(ready) })}, nil
}

// addLoopbackClients runs the clients the server has of itself: the shared
// informers (for namespace admission and RBAC), the system namespaces',
// the default ServiceCIDR's and the default RBAC roles' bootstrap, the
// namespace and ClusterRole aggregation controllers and, if asked, the
// namespace defaults (with caCert) and the garbage collector. The returned func stops them, before
// the HTTP server stops.
func addLoopbackClients(generic *genericapiserver.GenericAPIServer, factory informers.SharedInformerFactory, buildAdmission func() error, port int, loopback, admin *rest.Config, caCert []byte, namespaced func() []schema.GroupVersionResource, garbageCollector, namespaceDefaults bool) (stop func(), err error) {
	loopbackClient, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return nil, err
	}
	loopbackCtx, stopLoopback := context.WithCancel(context.Background())
	var controllers sync.WaitGroup
	stop = func() {
		stopLoopback()
		factory.Shutdown()
		controllers.Wait()
		for _, cfg := range []*rest.Config{loopback, admin} {
			if rt, err := rest.TransportFor(cfg); err == nil {
				utilnet.CloseIdleConnectionsFor(rt)
			}
		}
	}
	// The server is ready once the informers have synced and the admission
	// chain, which reads some, is built on them (see deferredAdmission).
	// The bootstrap writes wait for them too.
	synced := make(chan struct{})
	generic.AddPostStartHookOrDie("start-informers", func(hc genericapiserver.PostStartHookContext) error {
		factory.Start(loopbackCtx.Done())
		if !waitForSync(hc, factory) {
			return nil
		}
		if err := buildAdmission(); err != nil {
			return err
		}
		close(synced)
		return nil
	})
	generic.AddPostStartHookOrDie("bootstrap-namespaces", func(hc genericapiserver.PostStartHookContext) error {
		if !afterSync(hc, synced) {
			return nil
		}
		if err := bootstrapNamespaces(hc, loopbackClient); err != nil {
			return err
		}
		return bootstrapKubernetesService(hc, loopbackClient, port)
	})
	// The default ServiceCIDR, under upstream's hook name.
	generic.AddPostStartHookOrDie("start-kubernetes-service-cidr-controller", func(hc genericapiserver.PostStartHookContext) error {
		if !afterSync(hc, synced) {
			return nil
		}
		return bootstrapServiceCIDR(hc, loopbackClient)
	})
	generic.AddPostStartHookOrDie("scheduling/bootstrap-system-priority-classes", func(hc genericapiserver.PostStartHookContext) error {
		if !afterSync(hc, synced) {
			return nil
		}
		return bootstrapPriorityClasses(hc, loopbackClient)
	})
	generic.AddPostStartHookOrDie("namespace-controller", func(hc genericapiserver.PostStartHookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		meta, err := metadata.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		controller := namespace.New(client, meta, factory.Core().V1().Namespaces(), namespaced)
		controllers.Go(func() { controller.Run(loopbackCtx) })
		return nil
	})
	// The RBAC informers (the authorizer's, and the aggregation
	// controller's) are made now, so that start-informers starts them.
	rbac := factory.Rbac().V1()
	rbacSynced := []cache.DoneChecker{rbac.Roles().Informer().HasSyncedChecker(), rbac.RoleBindings().Informer().HasSyncedChecker(),
		rbac.ClusterRoles().Informer().HasSyncedChecker(), rbac.ClusterRoleBindings().Informer().HasSyncedChecker()}
	aggregation := clusterroleaggregation.New(loopbackClient.RbacV1(), rbac.ClusterRoles())
	generic.AddPostStartHookOrDie("rbac/bootstrap-roles", func(hc genericapiserver.PostStartHookContext) error {
		if !afterSync(hc, synced) {
			return nil
		}
		return bootstrapRBAC(hc, loopbackClient, rbacSynced, rbac.ClusterRoles().Lister())
	})
	if namespaceDefaults {
		defaults := namespacedefaults.New(loopbackClient, caCert, factory.Core().V1().Namespaces())
		generic.AddPostStartHookOrDie("namespace-defaults", func(genericapiserver.PostStartHookContext) error {
			controllers.Go(func() { defaults.Run(loopbackCtx) })
			return nil
		})
	}
	generic.AddPostStartHookOrDie("clusterrole-aggregation", func(genericapiserver.PostStartHookContext) error {
		controllers.Go(func() { aggregation.Run(loopbackCtx) })
		return nil
	})
	policyStatus := newPolicyStatusController(loopbackClient, factory)
	generic.AddPostStartHookOrDie("validatingadmissionpolicy-status", func(genericapiserver.PostStartHookContext) error {
		controllers.Go(func() { policyStatus.Run(loopbackCtx) })
		return nil
	})
	if garbageCollector {
		addGarbageCollector(loopbackCtx, generic, &controllers)
	}
	return stop, nil
}

// waitForSync waits until every informer factory has started has synced,
// and reports whether they have (false: ctx ended first).
func waitForSync(ctx context.Context, factory informers.SharedInformerFactory) bool {
	return factory.WaitForCacheSyncWithContext(ctx).Err == nil
}

// afterSync waits until synced closes, and reports whether it has (false:
// ctx ended first).
func afterSync(ctx context.Context, synced <-chan struct{}) bool {
	select {
	case <-synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// bootstrapRBAC creates (or reconciles) the default roles and bindings,
// then waits until the authorizer's informers have synced and the
// aggregated default roles (admin, edit, view) have their rules: the server
// is not ready before (an empty admin role would let anyone bind it). It
// gives up when ctx ends, or after 30s.
func bootstrapRBAC(ctx context.Context, client kubernetes.Interface, synced []cache.DoneChecker, clusterRoles rbaclisters.ClusterRoleLister) error {
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		lastErr = auth.Bootstrap(client)
		return lastErr == nil, nil
	})
	if ctx.Err() != nil {
		return nil // stopped while starting: no failure
	}
	if err != nil {
		return fmt.Errorf("default RBAC roles: %w (%v)", err, lastErr)
	}
	if !cache.WaitFor(ctx, "", synced...) {
		return nil // stopped while starting
	}
	roles, _, err := auth.DefaultClusterRoles()
	if err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, r := range roles {
			if r.AggregationRule == nil {
				continue
			}
			if got, err := clusterRoles.Get(r.Name); err != nil || len(got.Rules) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("default RBAC roles not aggregated: %w", err)
	}
	return nil
}

// genericConfig is the generic API server's config: serving, authn/z,
// admission, OpenAPI, health checks and storage.
func (c CompletedConfig) genericConfig(ctx context.Context, backend *storagebackend.Config, storages *serverstorage.Storages, admissionDone, ready <-chan struct{}) (*genericapiserver.Config, informers.SharedInformerFactory, *deferredAdmission, error) {
	gc := genericapiserver.NewConfig(api.Codecs)
	gc.EffectiveVersion = version.EffectiveVersion()
	gc.FeatureGate = utilfeature.DefaultFeatureGate
	gc.PublicAddress = net.ParseIP(c.Options.BindAddress)
	if gc.PublicAddress.IsUnspecified() {
		gc.PublicAddress = net.ParseIP("127.0.0.1")
	}

	cert, err := dynamiccertificates.NewStaticCertKeyContent("serving-cert", c.creds.ServingCert, c.creds.ServingKey)
	if err != nil {
		return nil, nil, nil, err
	}
	// Shutdown closes the connections once requests have drained and the
	// watch handlers have returned (the generic server, made from gc, is
	// not there yet when this runs).
	watches := &watchHandlers{}
	logger := klog.FromContext(ctx)
	gc.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		// The authenticator is complete now, loopback token included.
		c.Authentication.Authenticator = quietFailures(c.Authentication.Authenticator)
		return withLogger(genericapiserver.DefaultBuildHandlerChain(watches.wrap(withGzip(h)), c), logger)
	}
	drained := func() {
		if g := c.generic.Load(); g != nil {
			g.NonLongRunningRequestWaitGroup.Wait()
		}
		watches.wait(watchDrainTimeout)
	}
	clientCA, err := dynamiccertificates.NewStaticCAContent("client-ca", c.creds.CACert)
	if err != nil {
		return nil, nil, nil, err
	}
	gc.SecureServing = &genericapiserver.SecureServingInfo{Listener: newClosingListener(c.Listener, drained), Cert: cert, ClientCA: clientCA, HTTP2MaxStreamsPerConnection: 1000}

	loopback := rest.CopyConfig(c.Admin)
	loopback.BearerToken = datadir.NewToken()
	loopback.QPS = -1
	loopback.ContentType = "application/vnd.kubernetes.protobuf"
	loopback.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	gc.LoopbackClientConfig = loopback
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return nil, nil, nil, err
	}
	gc.Authentication.APIAudiences = authenticator.Audiences{serviceAccountIssuer}
	c.serviceAccounts = &auth.ServiceAccountTokens{Key: c.creds.SAKey, Issuer: serviceAccountIssuer, Audiences: gc.Authentication.APIAudiences, Lookup: clientLookup{client}}
	if c.tokens, err = newTokenAuthenticator(c.creds.AdminToken, c.Options.TokenAuthFile, c.serviceAccounts); err != nil {
		return nil, nil, nil, err
	}
	if gc.Authentication.Authenticator, err = newAuthenticator(c.creds.CACert, c.tokens); err != nil {
		return nil, nil, nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	if gc.Authorization.Authorizer, gc.RuleResolver, err = newAuthorizer(c.Options.AuthorizationMode, factory); err != nil {
		return nil, nil, nil, err
	}
	// Complete adds the loopback token (AuthorizeClientBearerToken).

	namer := openapi.NewDefinitionNamer(api.Scheme)
	gc.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIConfig.Info.Title = "Kubernetes"
	gc.OpenAPIConfig.Info.Version = version.GitVersion()
	gc.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIV3Config.Info.Title = "Kubernetes"
	gc.OpenAPIV3Config.Info.Version = version.GitVersion()
	gc.SkipOpenAPIInstallation = true // see openAPI

	gc.RESTOptionsGetter = storage.RESTOptionsGetter{Config: backend, Decorator: storages.Decorator, GarbageCollection: c.Options.GarbageCollector,
		SoleServer: len(c.Options.EtcdServers) == 0}
	// Shared with the apiextensions server, which adds the CRD groups.
	gc.AggregatedDiscoveryGroupManager = discoveryendpoint.NewResourceManager("apis")
	if err := addEtcdChecks(ctx, gc, backend); err != nil {
		return nil, nil, nil, err
	}

	admission, err := addAdmission(gc, NewAdmissionOptions(c.Options.EnableAdmissionPlugins, c.Options.DisableAdmissionPlugins), factory, client, loopback, c.Options.WebhookServices, ready, admissionDone)
	if err != nil {
		return nil, nil, nil, err
	}
	return gc, factory, admission, nil
}

// withLogger puts logger into every request's context, so that what the
// handlers log through klog.FromContext is attributed to this server (the
// in-process test server gives each server a logger of its own).
func withLogger(h http.Handler, logger klog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		h.ServeHTTP(w, req.WithContext(klog.NewContext(req.Context(), logger)))
	})
}

// addEtcdChecks adds etcd to /healthz, /livez and /readyz, as kube-apiserver does.
func addEtcdChecks(ctx context.Context, gc *genericapiserver.Config, backend *storagebackend.Config) error {
	health, err := storagefactory.CreateHealthCheck(*backend, ctx.Done())
	if err != nil {
		return err
	}
	ready, err := storagefactory.CreateReadyCheck(*backend, ctx.Done())
	if err != nil {
		return err
	}
	gc.AddHealthChecks(healthz.NamedCheck("etcd", func(*http.Request) error { return health() }))
	gc.AddReadyzChecks(healthz.NamedCheck("etcd-readiness", func(*http.Request) error { return ready() }))
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
		if s.etcd != nil {
			s.etcd.Close()
		}
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
	// admission plugins may read it (see openAPIAfter).
	go func() {
		if s.pollReady(ctx) == nil {
			s.openAPI.buildV3()
			s.ready()
		}
	}()
	return s.generic.PrepareRun().RunWithContext(ctx)
}

// pollReady polls /readyz until it answers 200 or ctx ends.
func (s *Server) pollReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(s.Admin)
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

// WaitReady polls /readyz until it answers 200 or ctx ends, then installs
// the CRDs of Options.CRDPaths and waits until they are served.
func (s *Server) WaitReady(ctx context.Context) error {
	if err := s.pollReady(ctx); err != nil {
		return err
	}
	if err := installCRDs(ctx, s.Admin, s.crds); err != nil {
		return err
	}
	if err := s.webhooks.install(ctx, s.Admin); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Server ready", "address", s.Admin.Host)
	return nil
}
