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
	"slices"
	"strings"
	"sync"

	"github.com/emicklei/go-restful/v3"
	"go.opentelemetry.io/otel/trace/noop"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	endpointsopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/notfoundhandler"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/server/serving"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// newAPIExtensions builds the apiextensions-apiserver that serves
// CustomResourceDefinitions and custom resources, as kube-apiserver builds
// it: from a copy of the core server's config, as the core server's
// delegate (requests the core server has no route for go to it). CRDs and
// custom resources are stored through the same decorator as built-in types,
// so custom resources get the same watch caches.
//
// kube-apiserver's aggregator, which it puts in front of both, merges their
// discovery and OpenAPI. This server has no aggregator: the two servers share
// the aggregated discovery manager, and serveAPIExtensions adds the rest to
// the core server once it exists.
//
// Its own clients of the server (its CRD informer and controllers) go
// through loopback, which serves them in process: Server.Run syncs the CRD
// informer before the server listens, so that the readiness check waiting
// for it passes at once.
func newAPIExtensions(core *genericapiserver.Config, getter storage.RESTOptionsGetter, loopback *serving.InProcess, services webhook.ServiceResolver, lists *encoding.CustomResourceLists) (*apiExtensions, error) {
	gc := *core
	gc.LoopbackClientConfig = rest.CopyConfig(core.LoopbackClientConfig)
	gc.LoopbackClientConfig.TLSClientConfig = rest.TLSClientConfig{}
	gc.LoopbackClientConfig.Transport = loopback
	gc.PostStartHooks = map[string]genericapiserver.PostStartHookConfigEntry{}
	gc.RESTOptionsGetter = storage.CRDRESTOptionsGetter(getter)
	gc.MergedResourceConfig = apiextensionsapiserver.DefaultAPIResourceConfigSource()
	namer := endpointsopenapi.NewDefinitionNamer(apiextensionsapiserver.Scheme)
	gc.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(apiextensionsopenapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(apiextensionsopenapi.GetOpenAPIDefinitions, namer)
	// Its OpenAPI is served by the core server's handlers (see
	// serveAPIExtensions); the configs still give server-side apply its schemas.
	gc.SkipOpenAPIInstallation = true
	config := &apiextensionsapiserver.Config{
		// No SharedInformerFactory: the server would start the core
		// server's factory itself, with a stop channel that closes only
		// after the loopback clients' shutdown waits for its informers.
		GenericConfig: &genericapiserver.RecommendedConfig{Config: gc},
		ExtraConfig: apiextensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: storage.CustomResourceRESTOptionsGetter{RESTOptionsGetter: getter, Made: lists.Made},
			MasterCount:          1,
			// Conversion webhooks: a service reference resolves as admission webhooks' do.
			ServiceResolver:     services,
			AuthResolverWrapper: webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, core.LoopbackClientConfig, noop.NewTracerProvider()),
		},
	}
	// The end of the delegation chain, as kube-apiserver's: a path no
	// server serves is a plain 404 (a 503 before the paths are installed).
	notFound := notfoundhandler.New(gc.Serializer, genericapifilters.NoMuxAndDiscoveryIncompleteKey)
	s, err := config.Complete().New(genericapiserver.NewEmptyDelegateWithCustomHandler(notFound))
	if err != nil {
		return nil, err
	}
	return &apiExtensions{CustomResourceDefinitions: s, openAPIConfig: gc.OpenAPIConfig, openAPIV3Config: gc.OpenAPIV3Config}, nil
}

// apiExtensions is the apiextensions-apiserver and the OpenAPI configs of
// its built-in API, which the core server serves.
type apiExtensions struct {
	*apiextensionsapiserver.CustomResourceDefinitions
	openAPIConfig   *common.Config
	openAPIV3Config *common.OpenAPIV3Config
}

// serveAPIExtensions makes the core server core show what the
// apiextensions server ext serves, as kube-apiserver's aggregator does:
// apiextensions.k8s.io and every CRD group in the legacy /apis list (the
// aggregated one is shared already), and their OpenAPI v2 and v3.
// The CRDs join the core server's OpenAPI once it is built.
func serveAPIExtensions(core *genericapiserver.GenericAPIServer, ext *apiExtensions, openAPI *openapi.Server) error {
	crds := ext.Informers.Apiextensions().V1().CustomResourceDefinitions()
	groups := &crdGroups{manager: core.DiscoveryGroupManager, lister: crds.Lister(), added: map[string]bool{}}
	core.DiscoveryGroupManager.AddGroup(metav1.APIGroup{
		Name:             apiextensionsv1.GroupName,
		Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: apiextensionsv1.SchemeGroupVersion.String(), Version: "v1"}},
		PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: apiextensionsv1.SchemeGroupVersion.String(), Version: "v1"},
	})
	if _, err := crds.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { groups.sync() },
		UpdateFunc: func(any, any) { groups.sync() },
		DeleteFunc: func(any) { groups.sync() },
	}); err != nil {
		return err
	}

	core.AddPostStartHookOrDie("apiextensions-openapi", func(hc genericapiserver.PostStartHookContext) error {
		openAPI.RunCRDControllers(hc, crds)
		return nil
	})
	return nil
}

// openAPI is what the core server's OpenAPI takes of ext:
// apiextensions.k8s.io/v1's web services (the group's own web service,
// /apis/<group>, is discovery, which the core server serves) and configs.
func (ext *apiExtensions) openAPI() openapi.Extensions {
	var services []*restful.WebService
	for _, ws := range ext.GenericAPIServer.Handler.GoRestfulContainer.RegisteredWebServices() {
		if strings.HasPrefix(ws.RootPath(), "/apis/"+apiextensionsv1.GroupName+"/") {
			services = append(services, ws)
		}
	}
	return openapi.Extensions{WebServices: services, V2: ext.openAPIConfig, V3: ext.openAPIV3Config}
}

// crdGroups keeps the core server's legacy /apis list in step with the
// CRD groups, as the CRD discovery controller keeps /apis/<group>: a group
// is listed while an Established CRD serves a version of it, its versions
// in Kubernetes version order, the first preferred.
type crdGroups struct {
	manager discovery.GroupManager
	lister  apiextensionslisters.CustomResourceDefinitionLister
	mu      sync.Mutex      // serializes sync, which guards added
	added   map[string]bool // the groups sync added to manager
}

func (g *crdGroups) sync() {
	g.mu.Lock()
	defer g.mu.Unlock()
	crds, err := g.lister.List(labels.Everything())
	if err != nil {
		return
	}
	versions := map[string][]string{}
	for _, crd := range crds {
		if !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && !slices.Contains(versions[crd.Spec.Group], v.Name) {
				versions[crd.Spec.Group] = append(versions[crd.Spec.Group], v.Name)
			}
		}
	}
	for group := range g.added {
		if _, ok := versions[group]; !ok {
			g.manager.RemoveGroup(group)
			delete(g.added, group)
		}
	}
	for group, vs := range versions {
		slices.SortFunc(vs, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
		apiGroup := metav1.APIGroup{Name: group}
		for _, v := range vs {
			apiGroup.Versions = append(apiGroup.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
		}
		apiGroup.PreferredVersion = apiGroup.Versions[0]
		g.manager.AddGroup(apiGroup)
		g.added[group] = true
	}
}

// customResources returns the namespaced custom resources served now (each
// at a version it is served in), for the namespace controller.
func customResources(lister apiextensionslisters.CustomResourceDefinitionLister) []schema.GroupVersionResource {
	crds, _ := lister.List(labels.Everything())
	var out []schema.GroupVersionResource
	for _, crd := range crds {
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped || !apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				out = append(out, schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Status.AcceptedNames.Plural})
				break
			}
		}
	}
	return out
}
