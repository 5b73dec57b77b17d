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

package registrytest

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// REST returns the store of resource that newStorage builds, completed on
// a decorator that builds no storage: enough to reach its strategy,
// predicate and table.
func REST(t testing.TB, newStorage func(generic.RESTOptionsGetter) (map[string]rest.Storage, error), resource string) *registry.REST {
	t.Helper()
	storages, err := newStorage(generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: resource,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error),
			func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers,
		) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
	})
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	r, ok := storages[resource].(*registry.REST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.REST", resource, storages[resource])
	}
	return r
}

// ErrorPaths returns "field: type" for each error, sorted.
func ErrorPaths(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: %s", e.Field, e.Type))
	}
	slices.Sort(out)
	return out
}

// ColumnNames returns the names of table's columns.
func ColumnNames(table *metav1.Table) []string {
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}
