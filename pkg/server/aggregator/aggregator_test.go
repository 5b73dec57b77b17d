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
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestLocalAPIService(t *testing.T) {
	for path, want := range map[string]*apiregistrationv1.APIService{
		"/api/v1":       {ObjectMeta: metav1.ObjectMeta{Name: "v1."}, Spec: apiregistrationv1.APIServiceSpec{Version: "v1", GroupPriorityMinimum: 18000, VersionPriority: 1}},
		"/apis/apps/v1": {ObjectMeta: metav1.ObjectMeta{Name: "v1.apps"}, Spec: apiregistrationv1.APIServiceSpec{Group: "apps", Version: "v1", GroupPriorityMinimum: 17800, VersionPriority: 15}},
		"/apis/testcontrol.miniapiserver.io/v1alpha1": {ObjectMeta: metav1.ObjectMeta{Name: "v1alpha1.testcontrol.miniapiserver.io"},
			Spec: apiregistrationv1.APIServiceSpec{Group: "testcontrol.miniapiserver.io", Version: "v1alpha1", GroupPriorityMinimum: 15600, VersionPriority: 9}},
		// Not a group-version, or one kube-apiserver has no priority for.
		"/apis/example.com/v1": nil, "/apis/apps": nil, "/apis": nil, "/healthz": nil, "/api": nil,
	} {
		if diff := cmp.Diff(want, localAPIService(path)); diff != "" {
			t.Errorf("localAPIService(%q) (-want +got):\n%s", path, diff)
		}
	}
}

// registered records what crdRegistration registers.
type registered map[string]apiregistrationv1.APIServiceSpec

func (r registered) AddAPIServiceToSync(in *apiregistrationv1.APIService) { r[in.Name] = in.Spec }
func (r registered) RemoveAPIServiceToSync(name string)                   { delete(r, name) }

func TestCRDRegistrationSync(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1", Served: true, Storage: true}, {Name: "v1beta1", Served: false}}}}
	if err := indexer.Add(crd); err != nil {
		t.Fatal(err)
	}
	r := registered{}
	c := &crdRegistration{lister: apiextensionslisters.NewCustomResourceDefinitionLister(indexer), register: r}
	for _, v := range []string{"v1", "v1beta1"} {
		if err := c.sync(schema.GroupVersion{Group: "example.com", Version: v}); err != nil {
			t.Fatal(err)
		}
	}
	want := registered{"v1.example.com": {Group: "example.com", Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 100}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("registered while v1 is served and v1beta1 is not (-want +got):\n%s", diff)
	}

	if err := indexer.Delete(crd); err != nil {
		t.Fatal(err)
	}
	if err := c.sync(schema.GroupVersion{Group: "example.com", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	if len(r) != 0 {
		t.Errorf("registered once the CRD is gone: %v, want none", r)
	}
}
