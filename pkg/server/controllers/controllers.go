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

package controllers

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/controller/clusterroleaggregation"
	"github.com/miniapiserver/miniapiserver/pkg/controller/csrsigning"
	"github.com/miniapiserver/miniapiserver/pkg/controller/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/controller/namespacedefaults"
	"github.com/miniapiserver/miniapiserver/pkg/controller/policystatus"
	"github.com/miniapiserver/miniapiserver/pkg/controller/resourcequota"
	"github.com/miniapiserver/miniapiserver/pkg/controller/storageprotection"
	"github.com/miniapiserver/miniapiserver/pkg/garbagecollector"
	generatedopenapi "github.com/miniapiserver/miniapiserver/pkg/generated/openapi"
)

// Config is what List makes the controllers with: the server's own
// client, config and informers.
type Config struct {
	// Client is the server's loopback client.
	Client kubernetes.Interface
	// Loopback is the config Client is made with; the quota controller
	// makes its metadata client with it.
	Loopback *rest.Config
	// Factory is the server's shared informer factory. List makes the
	// informers the controllers read in it, so that the server starts
	// them with its own.
	Factory informers.SharedInformerFactory
	// Controllers are the controllers to run, in the syntax of
	// --controllers (Options.Controllers; see Enabled).
	Controllers []string
	// RootCA is published as kube-root-ca.crt in every namespace.
	RootCA []byte
	// SigningCert and SigningKey (PEM) are the CA whose certificate and
	// key sign approved CertificateSigningRequests; without them (nil)
	// the CSR signer does not run.
	SigningCert, SigningKey []byte
	// Namespaced lists the namespaced resources, custom ones included
	// (what the namespace controller deletes with a namespace).
	Namespaced func() []schema.GroupVersionResource
	// Alone reports whether the server has its etcd to itself.
	Alone func() bool
}

// Controller is an in-server controller, which the server starts with a
// post-start hook of its name.
type Controller struct {
	Name string
	// Start makes the controller with the loopback config; run runs it
	// until its context ends.
	Start func(*rest.Config) (run func(context.Context), err error)
}

// List makes the controllers cfg.Controllers runs. Those that read the
// shared informers are made now, so that their informers start with the
// factory's others; an error making one is its Start's.
func List(cfg Config) []Controller {
	on := func(name string) bool { return Enabled(cfg.Controllers, name) }
	var list []Controller
	if on(Namespace) {
		list = append(list, Controller{"namespace-controller", cfg.namespaceController})
	}
	if sa, ca := on(ServiceAccount), on(RootCAPublisher); sa || ca {
		var rootCA []byte
		if ca {
			rootCA = cfg.RootCA
		}
		defaults := namespacedefaults.New(cfg.Client, rootCA, sa, cfg.Factory.Core().V1().Namespaces(), cfg.Alone)
		list = append(list, Controller{"namespace-defaults", made(defaults.Run, nil)})
	}
	if on(ClusterRoleAggregation) {
		aggregation := clusterroleaggregation.New(cfg.Client.RbacV1(), cfg.Factory.Rbac().V1().ClusterRoles())
		list = append(list, Controller{"clusterrole-aggregation", made(aggregation.Run, nil)})
	}
	if on(PolicyStatus) {
		list = append(list, Controller{"validatingadmissionpolicy-status", made(newPolicyStatus(cfg.Client, cfg.Factory).Run, nil)})
	}
	if on(GarbageCollector) {
		list = append(list, Controller{"garbage-collector", newGarbageCollector})
	}
	// Without a CA to sign with (kube-apiserver's flags name none) it does not run.
	if on(CSRSigning) && cfg.SigningCert != nil {
		signing, err := csrsigning.New(csrsigning.Config{Client: cfg.Client.CertificatesV1(),
			Informer: cfg.Factory.Certificates().V1().CertificateSigningRequests(), CACert: cfg.SigningCert, CAKey: cfg.SigningKey})
		list = append(list, Controller{CSRSigning, made(signing.Run, err)})
	}
	if on(ResourceQuota) {
		list = append(list, Controller{ResourceQuota, cfg.quotaController()})
	}
	core, storage := cfg.Factory.Core().V1(), cfg.Factory.Storage().V1()
	if on(PVCProtection) {
		list = append(list, Controller{PVCProtection, made(storageprotection.NewPVC(cfg.Client, core.PersistentVolumeClaims(), core.Pods()).Run, nil)})
	}
	if on(PVProtection) {
		list = append(list, Controller{PVProtection, made(storageprotection.NewPV(cfg.Client, core.PersistentVolumes()).Run, nil)})
	}
	if on(VACProtection) {
		vac := storageprotection.NewVAC(cfg.Client, storage.VolumeAttributesClasses(), core.PersistentVolumes(), core.PersistentVolumeClaims())
		list = append(list, Controller{VACProtection, made(vac.Run, nil)})
	}
	return list
}

// made is the Start of a controller made already: it returns run, or
// err, the error making it.
func made(run func(context.Context), err error) func(*rest.Config) (func(context.Context), error) {
	return func(*rest.Config) (func(context.Context), error) {
		if err != nil {
			return nil, err
		}
		return run, nil
	}
}

// namespaceController makes the controller that empties and then deletes
// namespaces being deleted, with the loopback config lc.
func (cfg Config) namespaceController(lc *rest.Config) (func(context.Context), error) {
	client, err := kubernetes.NewForConfig(lc)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(lc)
	if err != nil {
		return nil, err
	}
	return namespace.New(client, meta, cfg.Factory.Core().V1().Namespaces(), cfg.Namespaced).Run, nil
}

// quotaController returns the Start of the controller that keeps quotas'
// status, for the ResourceQuota admission plugin, which refuses what a
// quota without one would count.
func (cfg Config) quotaController() func(*rest.Config) (func(context.Context), error) {
	meta, err := metadata.NewForConfig(cfg.Loopback)
	if err != nil {
		return made(nil, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cfg.Client.Discovery()))
	quotas, err := resourcequota.New(resourcequota.Config{Client: cfg.Client, Factory: cfg.Factory, Metadata: meta, Mapper: mapper})
	return made(quotas.Run, err)
}

// newGarbageCollector makes the garbage collector with the loopback
// config lc; it runs until its context ends.
func newGarbageCollector(lc *rest.Config) (func(context.Context), error) {
	meta, err := metadata.NewForConfig(lc)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(lc)
	if err != nil {
		return nil, err
	}
	gc, err := garbagecollector.New(garbagecollector.Config{Metadata: meta, Discovery: disc})
	if err != nil {
		return nil, err
	}
	return gc.Run, nil
}

// newPolicyStatus returns the controller that type-checks
// ValidatingAdmissionPolicies, with the schemas of the built-in types and,
// for custom resources, those the server publishes, as
// kube-controller-manager's.
func newPolicyStatus(client kubernetes.Interface, factory informers.SharedInformerFactory) *policystatus.Controller {
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
