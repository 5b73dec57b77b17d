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

package aggregator

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationhelper "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/helper"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	aggregatorapiserver "k8s.io/kube-aggregator/pkg/apiserver"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	apiregistrationclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/typed/apiregistration/v1"
	"k8s.io/kube-aggregator/pkg/controllers/autoregister"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"

	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// OpenAPIV2 is what the core server's /openapi/v2 takes of s, as
// kube-apiserver's lists it: apiregistration.k8s.io's web services.
func OpenAPIV2(s *aggregatorapiserver.APIAggregator) openapi.Extensions {
	v2, _ := openapi.Configs(aggregatoropenapi.GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(aggregatorscheme.Scheme))
	return openapi.Extensions{WebServices: openapi.GroupServices(s.GenericAPIServer.Handler.GoRestfulContainer, apiregistrationv1.GroupName), V2: v2}
}

// Config is what New builds the aggregator from.
type Config struct {
	// Core is the core server's generic config, which New copies (it
	// does not change it). Its RESTOptionsGetter is a
	// storage.RESTOptionsGetter: APIServices are stored through it, as
	// JSON as kube-apiserver stores them.
	Core *genericapiserver.Config
	// Informers are the core server's, which it starts: the Services and
	// EndpointSlices that APIServices' Services resolve by.
	Informers informers.SharedInformerFactory
	// CRDs are apiextensions-apiserver's CRD informer: each group-version
	// a CRD serves gets a local APIService.
	CRDs apiextensionsinformers.CustomResourceDefinitionInformer
	// Mapped resolves the Services it holds (--webhook-service); any
	// other resolves as in kube-apiserver, by its cluster IP or, with
	// EndpointRouting, an EndpointSlice's address.
	Mapped webhook.ServiceResolver
	// OpenAPIV3, if set, serves delegate's OpenAPI v3 in front of the
	// aggregator's (apiregistration.k8s.io's and the extension API
	// servers'), which it is given: the aggregator's v3 aggregation reads
	// its delegates' indexes only at start and each second after.
	OpenAPIV3 func(aggregator http.Handler) http.Handler
	// Stopping, if set, closes when the server starts ending its watches
	// at shutdown: the aggregator's requests to it are refused from then
	// on (see refusedOnceStopping).
	Stopping <-chan struct{}
	Options
}

// Options are kube-apiserver's aggregator flags.
type Options struct {
	// ProxyClientCertFile and ProxyClientKeyFile are the client
	// certificate the proxy presents to extension API servers
	// (--proxy-client-cert-file, --proxy-client-key-file).
	ProxyClientCertFile, ProxyClientKeyFile string
	// EndpointRouting proxies to an EndpointSlice's address rather than
	// the Service's cluster IP (--enable-aggregator-routing).
	EndpointRouting bool
	// ForwardRedirects passes an extension API server's redirects on to
	// the client (--aggregator-reject-forwarding-redirect=false).
	ForwardRedirects bool
}

// New builds kube-aggregator's server in front of delegate, as
// kube-apiserver builds it (k8s.io/kubernetes' pkg/controlplane/apiserver
// aggregator.go), from a copy of the core server's config. It copies
// delegate's post-start and pre-shutdown hooks and health checks: call it
// once delegate has all of them.
//
// The caller runs it with its PrepareRun, which wires the OpenAPI v3
// aggregation, served through c.OpenAPIV3.
func New(c Config, delegate genericapiserver.DelegationTarget) (*aggregatorapiserver.APIAggregator, error) {
	switch {
	case c.Core == nil:
		return nil, errors.New("aggregator: Config.Core is required")
	case c.Informers == nil:
		return nil, errors.New("aggregator: Config.Informers is required")
	case c.CRDs == nil:
		return nil, errors.New("aggregator: Config.CRDs is required")
	}
	getter, ok := c.Core.RESTOptionsGetter.(storage.RESTOptionsGetter)
	if !ok {
		return nil, fmt.Errorf("aggregator: Config.Core.RESTOptionsGetter is a %T, not a storage.RESTOptionsGetter", c.Core.RESTOptionsGetter)
	}
	gc := *c.Core
	if c.Stopping != nil && gc.LoopbackClientConfig != nil {
		gc.LoopbackClientConfig = refusedOnceStopping(gc.LoopbackClientConfig, c.Stopping)
	}
	gc.PostStartHooks = map[string]genericapiserver.PostStartHookConfigEntry{}
	gc.SkipOpenAPIInstallation = true
	// No v2 aggregation: it would parse and merge the delegate's whole v2
	// spec again each time a CRD changes it, on the request that finds it
	// changed. Delegate's /openapi/v2 is served as it is.
	gc.OpenAPIConfig = nil
	gc.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(aggregatoropenapi.GetOpenAPIDefinitions, openapinamer.NewDefinitionNamer(aggregatorscheme.Scheme))
	if v3 := c.Core.OpenAPIV3Config; v3 != nil { // kube-apiserver's aggregator shares it
		gc.OpenAPIV3Config.Info, gc.OpenAPIV3Config.SecuritySchemes = v3.Info, v3.SecuritySchemes
	}
	if c.OpenAPIV3 != nil {
		build := gc.BuildHandlerChainFunc
		gc.BuildHandlerChainFunc = func(h http.Handler, gc *genericapiserver.Config) http.Handler { return build(c.OpenAPIV3(h), gc) }
	}
	gc.RESTOptionsGetter = storage.CodecRESTOptionsGetter{RESTOptionsGetter: getter,
		Codec:           aggregatorscheme.Codecs.LegacyCodec(apiregistrationv1.SchemeGroupVersion, apiregistrationv1beta1.SchemeGroupVersion),
		EncodeVersioner: runtime.NewMultiGroupVersioner(apiregistrationv1.SchemeGroupVersion, schema.GroupKind{Group: apiregistrationv1beta1.GroupName})}
	gc.MergedResourceConfig = aggregatorapiserver.DefaultAPIResourceConfigSource()
	resolver, err := c.resolver()
	if err != nil {
		return nil, err
	}
	config := &aggregatorapiserver.Config{
		// The core server starts its informers; the aggregator would
		// start them again with a stop channel of its own.
		GenericConfig: &genericapiserver.RecommendedConfig{Config: gc, SharedInformerFactory: startedElsewhere{c.Informers}},
		ExtraConfig: aggregatorapiserver.ExtraConfig{
			ProxyClientCertFile: c.ProxyClientCertFile, ProxyClientKeyFile: c.ProxyClientKeyFile,
			ServiceResolver: resolver, RejectForwardingRedirects: !c.ForwardRedirects,
		},
	}
	s, err := config.Complete().NewWithDelegate(delegate)
	if err != nil {
		return nil, err
	}
	// The built-in groups' order in aggregated discovery.
	if m := gc.AggregatedDiscoveryGroupManager; m != nil {
		for gv, p := range priorities {
			m.SetGroupVersionPriority(metav1.GroupVersion(gv), int(p.group), int(p.version))
		}
	}
	if err := autoregistration(s, delegate, c.CRDs); err != nil {
		s.GenericAPIServer.Destroy()
		return nil, err
	}
	return s, nil
}

// autoregistration keeps the local APIServices of delegate's groups and
// of the CRDs' groups, and holds /readyz until the former are available,
// as kube-apiserver's CreateAggregatorServer does.
func autoregistration(s *aggregatorapiserver.APIAggregator, delegate genericapiserver.DelegationTarget,
	crds apiextensionsinformers.CustomResourceDefinitionInformer,
) error {
	client, err := apiregistrationclient.NewForConfig(s.GenericAPIServer.LoopbackClientConfig)
	if err != nil {
		return err
	}
	apiServices := s.APIRegistrationInformers.Apiregistration().V1().APIServices()
	auto := autoregister.NewAutoRegisterController(apiServices, client)
	var local []*apiregistrationv1.APIService
	for _, path := range delegate.ListedPaths() {
		if svc := localAPIService(path); svc != nil {
			auto.AddAPIServiceToSyncOnStart(svc)
			local = append(local, svc)
		}
	}
	crdRegistration, err := newCRDRegistration(crds, auto)
	if err != nil {
		return err
	}
	err = s.GenericAPIServer.AddPostStartHook("kube-apiserver-autoregistration", func(hc genericapiserver.PostStartHookContext) error {
		go crdRegistration.Run(5, hc.Done())
		go func() {
			// The CRDs' APIServices first: the first sync of the
			// autoregister controller deletes the automanaged ones it
			// was not given.
			select {
			case <-crdRegistration.initial:
			case <-hc.Done():
				return
			}
			auto.Run(5, hc.Done())
		}()
		return nil
	})
	if err != nil {
		return err
	}
	return s.GenericAPIServer.AddBootSequenceHealthChecks(available("autoregister-completion", local, apiServices.Informer()))
}

// localAPIService is the APIService kube-apiserver registers for a path
// its delegate lists (/api/v1, /apis/<group>/<version>), or nil.
func localAPIService(path string) *apiregistrationv1.APIService {
	var gv schema.GroupVersion
	switch tokens := strings.Split(path, "/"); {
	case path == "/api/v1":
		gv = schema.GroupVersion{Version: "v1"}
	case len(tokens) == 4 && tokens[1] == "apis":
		gv = schema.GroupVersion{Group: tokens[2], Version: tokens[3]}
	default:
		return nil
	}
	p, ok := priorities[gv]
	if !ok {
		return nil
	}
	svc := &apiregistrationv1.APIService{Spec: apiregistrationv1.APIServiceSpec{
		Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.group, VersionPriority: p.version}}
	svc.Name = gv.Version + "." + gv.Group
	return svc
}

// available is healthy once each of apiServices has been seen available.
func available(name string, apiServices []*apiregistrationv1.APIService, informer cache.SharedIndexInformer) healthz.HealthChecker {
	var mu sync.Mutex
	pending := sets.New[string]()
	for _, svc := range apiServices {
		pending.Insert(svc.Name)
	}
	seen := func(obj any) {
		if svc, ok := obj.(*apiregistrationv1.APIService); ok && apiregistrationhelper.IsAPIServiceConditionTrue(svc, apiregistrationv1.Available) {
			mu.Lock()
			pending.Delete(svc.Name)
			mu.Unlock()
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
	return healthz.NamedCheck(name, func(*http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		if pending.Len() > 0 {
			return fmt.Errorf("missing APIService: %v", sets.List(pending))
		}
		return nil
	})
}

// resolver is c's Service resolver: the mapped addresses first, then
// kube-apiserver's (buildServiceResolver).
func (c Config) resolver() (aggregatorapiserver.ServiceResolver, error) {
	services := c.Informers.Core().V1().Services().Lister()
	cluster := aggregatorapiserver.NewClusterIPServiceResolver(services)
	if c.EndpointRouting {
		slices, err := proxy.NewEndpointSliceIndexerGetter(c.Informers.Discovery().V1().EndpointSlices())
		if err != nil {
			return nil, err
		}
		cluster = aggregatorapiserver.NewEndpointServiceResolver(services, slices)
	}
	if host, err := url.Parse(c.Core.LoopbackClientConfig.Host); err == nil {
		cluster = aggregatorapiserver.NewLoopbackServiceResolver(cluster, host)
	}
	return mappedFirst{mapped: c.Mapped, cluster: cluster}, nil
}

type mappedFirst struct {
	mapped  webhook.ServiceResolver
	cluster aggregatorapiserver.ServiceResolver
}

func (r mappedFirst) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if r.mapped != nil {
		if u, err := r.mapped.ResolveEndpoint(namespace, name, port); err == nil {
			return u, nil
		}
	}
	return r.cluster.ResolveEndpoint(namespace, name, port)
}

// startedElsewhere is an informer factory whose Start does nothing.
type startedElsewhere struct {
	informers.SharedInformerFactory
}

func (startedElsewhere) Start(<-chan struct{}) {}
