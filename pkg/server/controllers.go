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
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/controller/clusterroleaggregation"
	"github.com/miniapiserver/miniapiserver/pkg/controller/csrsigning"
	"github.com/miniapiserver/miniapiserver/pkg/controller/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/controller/namespacedefaults"
	"github.com/miniapiserver/miniapiserver/pkg/controller/policystatus"
	"github.com/miniapiserver/miniapiserver/pkg/controller/resourcequota"
	generatedopenapi "github.com/miniapiserver/miniapiserver/pkg/generated/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server/bootstrap"
	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
)

// The in-server controllers, by kube-controller-manager's names (its
// --controllers takes these, and the short ones without "-controller").
const (
	ControllerNamespace              = "namespace-controller"
	ControllerClusterRoleAggregation = "clusterrole-aggregation-controller"
	ControllerServiceAccount         = "serviceaccount-controller"
	ControllerRootCAPublisher        = "root-ca-certificate-publisher-controller"
	ControllerPolicyStatus           = "validatingadmissionpolicy-status-controller"
	ControllerGarbageCollector       = "garbage-collector-controller"
	ControllerCSRSigning             = csrsigning.Name
	ControllerResourceQuota          = resourcequota.Name
)

// controllers are the in-server controllers; on says which "*" runs.
var controllers = map[string]bool{
	ControllerNamespace: true, ControllerClusterRoleAggregation: true, ControllerServiceAccount: true,
	ControllerRootCAPublisher: true, ControllerPolicyStatus: true, ControllerGarbageCollector: false, ControllerCSRSigning: true,
	ControllerResourceQuota: true,
}

// validateControllers refuses names in list (Options.Controllers) that
// are no in-server controller's.
func validateControllers(list []string) []error {
	var errs []error
	for _, c := range list {
		name := strings.TrimPrefix(c, "-")
		_, known := controllers[name]
		_, knownShort := controllers[name+"-controller"]
		if c != "*" && !known && !knownShort {
			errs = append(errs, fmt.Errorf("--controllers: %q is not an in-server controller (%s)", c, strings.Join(slices.Sorted(maps.Keys(controllers)), ", ")))
		}
	}
	return errs
}

// controllerEnabled reports whether list (Options.Controllers) runs
// controller name, as kube-controller-manager's IsControllerEnabled.
func controllerEnabled(list []string, name string) bool {
	short := strings.TrimSuffix(name, "-controller")
	star := false
	for _, c := range list {
		switch c {
		case name, short:
			return true
		case "-" + name, "-" + short:
			return false
		case "*":
			star = true
		}
	}
	return star && controllers[name]
}

// loopbackClients are what addLoopbackClients needs.
type loopbackClients struct {
	generic *genericapiserver.GenericAPIServer
	factory informers.SharedInformerFactory
	// buildAdmission builds the admission chain once factory has synced.
	buildAdmission func() error
	// port is the port the server serves on (the kubernetes Service's).
	port            int
	loopback, admin *rest.Config
	// rootCA is published as kube-root-ca.crt.
	rootCA []byte
	// clientCA, if not nil, is published in the authentication info.
	clientCA dynamiccertificates.CAContentProvider
	// signingCA, if not nil, is the CA whose certificate and key sign
	// approved CertificateSigningRequests (the data dir's, which clientCA
	// trusts).
	signingCA *datadir.Credentials
	// namespaced lists the namespaced resources, custom ones included.
	namespaced  func() []schema.GroupVersionResource
	controllers []string
	ranges      service.Ranges
	// services' record of node ports is repaired by a loop of the server's.
	services *service.Storage
	// peers, with external etcd, keeps the server's identity lease and
	// looks out for other servers'.
	peers *peers
}

// addLoopbackClients runs the clients the server has of itself: the shared
// informers (for admission and RBAC); the bootstrap of the system
// namespaces, the kubernetes Service, the default ServiceCIDR, the system
// PriorityClasses and the default RBAC roles, as kube-apiserver's
// post-start hooks; and the controllers l.controllers names. The returned
// func stops them, before the HTTP server stops.
func addLoopbackClients(l loopbackClients) (stop func(), err error) {
	loopbackClient, err := kubernetes.NewForConfig(finishing(l.loopback))
	if err != nil {
		return nil, err
	}
	generic, factory := l.generic, l.factory
	loopbackCtx, stopLoopback := context.WithCancel(context.Background())
	var running sync.WaitGroup
	stop = func() {
		stopLoopback()
		factory.Shutdown()
		running.Wait()
		for _, cfg := range []*rest.Config{l.loopback, l.admin} {
			if rt, err := rest.TransportFor(cfg); err == nil {
				utilnet.CloseIdleConnectionsFor(rt)
			}
		}
	}
	// The server is ready once the informers have synced and the admission
	// chain, which reads some, is built on them (see admissionchain.Deferred).
	// The bootstrap writes wait for them too.
	synced := make(chan struct{})
	generic.AddPostStartHookOrDie("start-informers", func(hc genericapiserver.PostStartHookContext) error {
		factory.Start(loopbackCtx.Done())
		if !waitForSync(hc, factory) {
			return nil
		}
		if err := l.buildAdmission(); err != nil {
			return err
		}
		close(synced)
		return nil
	})
	// afterSynced adds a post-start hook that runs bootstrap once synced.
	afterSynced := func(name string, bootstrap func(context.Context) error) {
		generic.AddPostStartHookOrDie(name, func(hc genericapiserver.PostStartHookContext) error {
			if !afterSync(hc, synced) {
				return nil
			}
			return bootstrap(hc)
		})
	}
	afterSynced("bootstrap-namespaces", func(ctx context.Context) error {
		if err := bootstrap.Namespaces(ctx, loopbackClient); err != nil {
			return err
		}
		return bootstrap.KubernetesService(ctx, loopbackClient, l.port, l.ranges)
	})
	// The default ServiceCIDR, under upstream's hook name.
	afterSynced("start-kubernetes-service-cidr-controller", func(ctx context.Context) error {
		return bootstrap.ServiceCIDR(ctx, loopbackClient, l.ranges)
	})
	if l.clientCA != nil {
		afterSynced("start-cluster-authentication-info-controller", func(ctx context.Context) error {
			return bootstrap.AuthenticationInfo(ctx, loopbackClient, l.clientCA.CurrentCABundleContent())
		})
	}
	// The record of node ports is repaired before the server is ready,
	// then every repairInterval (kube-apiserver's hook of this name).
	generic.AddPostStartHookOrDie("start-service-ip-repair-controllers", func(hc genericapiserver.PostStartHookContext) error {
		if err := firstRepair(hc, l.services, l.peers.Alone); err != nil {
			return err
		}
		running.Go(func() { repairEvery(loopbackCtx, l.services, l.peers.Alone) })
		return nil
	})
	afterSynced("start-legacy-token-tracking-controller", func(ctx context.Context) error {
		return bootstrap.LegacyTokenTracking(ctx, loopbackClient)
	})
	afterSynced("scheduling/bootstrap-system-priority-classes", func(ctx context.Context) error {
		return bootstrap.PriorityClasses(ctx, loopbackClient)
	})
	// The RBAC informers (the authorizer's, and the aggregation
	// controller's) are made now, so that start-informers starts them.
	rbac := factory.Rbac().V1()
	rbacSynced := []cache.DoneChecker{rbac.Roles().Informer().HasSyncedChecker(), rbac.RoleBindings().Informer().HasSyncedChecker(),
		rbac.ClusterRoles().Informer().HasSyncedChecker(), rbac.ClusterRoleBindings().Informer().HasSyncedChecker()}
	aggregated := controllerEnabled(l.controllers, ControllerClusterRoleAggregation)
	afterSynced("rbac/bootstrap-roles", func(ctx context.Context) error {
		return bootstrap.RBAC(ctx, loopbackClient, rbacSynced, rbac.ClusterRoles().Lister(), aggregated)
	})
	if !l.peers.embedded {
		generic.AddPostStartHookOrDie("start-kube-apiserver-identity-lease-controller", func(hc genericapiserver.PostStartHookContext) error {
			running.Go(func() { l.peers.runIdentityLease(loopbackCtx, loopbackClient) })
			// Ready once it knows whether it is alone.
			l.peers.watchPeers(loopbackCtx, hc, loopbackClient, &running)
			return nil
		})
	}
	for _, c := range l.inServerControllers(loopbackClient) {
		generic.AddPostStartHookOrDie(c.name, func(hc genericapiserver.PostStartHookContext) error {
			run, err := c.start(finishing(hc.LoopbackClientConfig))
			if err != nil {
				return err
			}
			running.Go(func() { run(loopbackCtx) })
			return nil
		})
	}
	return stop, nil
}

// inServerController is a controller of the server's, started by a
// post-start hook of its name.
type inServerController struct {
	name string
	// start makes the controller with the loopback config; it runs until
	// its context ends.
	start func(*rest.Config) (run func(context.Context), err error)
}

// inServerControllers are the controllers l.controllers runs.
func (l loopbackClients) inServerControllers(client kubernetes.Interface) []inServerController {
	on := func(name string) bool { return controllerEnabled(l.controllers, name) }
	var list []inServerController
	if on(ControllerNamespace) {
		list = append(list, inServerController{"namespace-controller", func(cfg *rest.Config) (func(context.Context), error) {
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return nil, err
			}
			meta, err := metadata.NewForConfig(cfg)
			if err != nil {
				return nil, err
			}
			return namespace.New(client, meta, l.factory.Core().V1().Namespaces(), l.namespaced).Run, nil
		}})
	}
	if sa, ca := on(ControllerServiceAccount), on(ControllerRootCAPublisher); sa || ca {
		var rootCA []byte
		if ca {
			rootCA = l.rootCA
		}
		defaults := namespacedefaults.New(client, rootCA, sa, l.factory.Core().V1().Namespaces(), l.peers.Alone)
		list = append(list, inServerController{"namespace-defaults", func(*rest.Config) (func(context.Context), error) { return defaults.Run, nil }})
	}
	if on(ControllerClusterRoleAggregation) {
		aggregation := clusterroleaggregation.New(client.RbacV1(), l.factory.Rbac().V1().ClusterRoles())
		list = append(list, inServerController{"clusterrole-aggregation", func(*rest.Config) (func(context.Context), error) { return aggregation.Run, nil }})
	}
	if on(ControllerPolicyStatus) {
		policyStatus := newPolicyStatusController(client, l.factory)
		list = append(list, inServerController{"validatingadmissionpolicy-status", func(*rest.Config) (func(context.Context), error) { return policyStatus.Run, nil }})
	}
	if on(ControllerGarbageCollector) {
		list = append(list, inServerController{"garbage-collector", newGarbageCollector})
	}
	// Without a CA to sign with (kube-apiserver's flags name none) it does not run.
	if ca := l.signingCA; on(ControllerCSRSigning) && ca != nil {
		// Made now, so that start-informers starts its informer.
		signing, err := csrsigning.New(csrsigning.Config{Client: client.CertificatesV1(),
			Informer: l.factory.Certificates().V1().CertificateSigningRequests(), CACert: ca.CACert, CAKey: ca.CAKey})
		list = append(list, inServerController{ControllerCSRSigning, func(*rest.Config) (func(context.Context), error) {
			if err != nil {
				return nil, err
			}
			return signing.Run, nil
		}})
	}
	if on(ControllerResourceQuota) {
		list = append(list, l.quotaController(client))
	}
	return list
}

// quotaController keeps quotas' status, for the ResourceQuota admission
// plugin, which refuses what a quota without one would count. Made now,
// so that start-informers starts its informers.
func (l loopbackClients) quotaController(client kubernetes.Interface) inServerController {
	meta, err := metadata.NewForConfig(finishing(l.loopback))
	var quotas *resourcequota.Controller
	if err == nil {
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
		quotas, err = resourcequota.New(resourcequota.Config{Client: client, Factory: l.factory, Metadata: meta, Mapper: mapper})
	}
	return inServerController{ControllerResourceQuota, func(*rest.Config) (func(context.Context), error) {
		if err != nil {
			return nil, err
		}
		return quotas.Run, nil
	}}
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

// Controllers are the names of the in-server controllers.
func Controllers() []string { return slices.Sorted(maps.Keys(controllers)) }

// repairInterval is how often the record of node ports is repaired
// (kube-apiserver's default).
const repairInterval = 3 * time.Minute

// firstRepair repairs services' record of node ports, retrying for up to
// a minute, as kube-apiserver before it is ready.
func firstRepair(ctx context.Context, services *service.Storage, alone func() bool) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = services.RepairNodePorts(ctx, alone())
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("unable to perform initial IP and Port allocation check: %w", errors.Join(err, last))
	}
	return nil
}

// repairEvery repairs services' record of node ports every
// repairInterval until ctx ends.
func repairEvery(ctx context.Context, services *service.Storage, alone func() bool) {
	ticker := time.NewTicker(repairInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		if err := services.RepairNodePorts(ctx, alone()); err != nil && ctx.Err() == nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Repairing the record of node ports")
		}
	}
}

// finishing returns cfg whose requests, but watches, run to their end
// when their context ends: the server's own clients stop (their context
// ends) as the server stops, and a request they had in flight, cancelled,
// would be answered as timed out and logged as an error. A watch ends
// with its context.
func finishing(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return finishingRequests{rt} })
	return cfg
}

type finishingRequests struct{ http.RoundTripper }

func (f finishingRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if w := req.URL.Query().Get("watch"); w == "true" || w == "1" || strings.Contains(req.URL.Path, "/watch/") {
		return f.RoundTripper.RoundTrip(req)
	}
	return f.RoundTripper.RoundTrip(req.WithContext(context.WithoutCancel(req.Context())))
}

// newPolicyStatusController returns the controller that type-checks
// ValidatingAdmissionPolicies, with the schemas of the built-in types and,
// for custom resources, those the server publishes, as
// kube-controller-manager's.
func newPolicyStatusController(client kubernetes.Interface, factory informers.SharedInformerFactory) *policystatus.Controller {
	// The built-in types' schemas are made when a policy is first checked.
	builtin := sync.OnceValue(func() resolver.SchemaResolver {
		return resolver.NewDefinitionsSchemaResolver(generatedopenapi.GetOpenAPIDefinitions, api.Scheme).
			Combine(&resolver.ClientDiscoveryResolver{Discovery: client.Discovery()})
	})
	schemas := lazySchemas(builtin)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	checker := &validating.TypeChecker{SchemaResolver: schemas, RestMapper: mapper}
	return policystatus.New(client.AdmissionregistrationV1(), factory.Admissionregistration().V1().ValidatingAdmissionPolicies(), checker, mapper)
}

// lazySchemas is a resolver.SchemaResolver made on first use.
type lazySchemas func() resolver.SchemaResolver

func (l lazySchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return l().ResolveSchema(gvk)
}
