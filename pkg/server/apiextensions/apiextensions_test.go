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
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// crd is a CRD of group serving versions (the first stored).
func crd(name, group string, scope apiextensionsv1.ResourceScope, established bool, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name + "." + group},
		Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: scope},
		Status:     apiextensionsv1.CustomResourceDefinitionStatus{AcceptedNames: apiextensionsv1.CustomResourceDefinitionNames{Plural: name}},
	}
	for i, v := range versions {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true, Storage: i == 0})
	}
	if established {
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	}
	return c
}

func lister(t *testing.T, crds ...*apiextensionsv1.CustomResourceDefinition) apiextensionslisters.CustomResourceDefinitionLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, c := range crds {
		if err := indexer.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return apiextensionslisters.NewCustomResourceDefinitionLister(indexer)
}

func TestCustomResources(t *testing.T) {
	for _, tc := range []struct {
		name string
		crds []*apiextensionsv1.CustomResourceDefinition
		want []schema.GroupVersionResource
	}{
		{name: "none"},
		{
			name: "namespaced and established, at its first served version",
			crds: []*apiextensionsv1.CustomResourceDefinition{crd("widgets", "example.com", apiextensionsv1.NamespaceScoped, true, "v1", "v2")},
			want: []schema.GroupVersionResource{{Group: "example.com", Version: "v1", Resource: "widgets"}},
		},
		{
			name: "cluster-scoped or not established: left out",
			crds: []*apiextensionsv1.CustomResourceDefinition{
				crd("gadgets", "example.com", apiextensionsv1.ClusterScoped, true, "v1"),
				crd("gizmos", "example.com", apiextensionsv1.NamespaceScoped, false, "v1"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CustomResources(lister(t, tc.crds...))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CustomResources (-want +got):\n%s", diff)
			}
		})
	}
}
