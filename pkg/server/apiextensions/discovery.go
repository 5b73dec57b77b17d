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

package apiextensions

import (
	"slices"
	"sync"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
)

// Serve makes the core server core show what s serves, as kube-apiserver's
// aggregator does: apiextensions.k8s.io and every CRD group in the legacy
// /apis list (the aggregated one is shared already), and their OpenAPI v2
// and v3. The CRDs join the core server's OpenAPI once it is built.
func (s *Server) Serve(core *genericapiserver.GenericAPIServer, openAPI *openapi.Server) error {
	crds := s.Informers.Apiextensions().V1().CustomResourceDefinitions()
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

// CustomResources returns the namespaced custom resources served now (each
// at a version it is served in), for the namespace controller.
func CustomResources(lister apiextensionslisters.CustomResourceDefinitionLister) []schema.GroupVersionResource {
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
