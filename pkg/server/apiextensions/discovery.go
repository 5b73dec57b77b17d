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
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/miniapiserver/miniapiserver/pkg/server/openapi"
)

// Serve has the core server serve the OpenAPI v2 and v3 of the CRDs,
// once it is built.
func (s *Server) Serve(core *genericapiserver.GenericAPIServer, openAPI *openapi.Server) error {
	crds := s.Informers.Apiextensions().V1().CustomResourceDefinitions()
	core.AddPostStartHookOrDie("apiextensions-openapi", func(hc genericapiserver.PostStartHookContext) error {
		openAPI.RunCRDControllers(hc, crds)
		return nil
	})
	return nil
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
