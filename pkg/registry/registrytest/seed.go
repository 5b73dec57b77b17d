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
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorageFunc is a registry package's NewStorage.
type NewStorageFunc = func(generic.RESTOptionsGetter) (map[string]rest.Storage, error)

// Seeded returns the storages newStorage builds on a new MemStorage that
// holds obj at its key in the store of resource, a request context in
// obj's namespace, and the stored copy of obj.
func Seeded[T runtime.Object](t testing.TB, newStorage NewStorageFunc, resource string, obj T) (context.Context, map[string]rest.Storage, T) {
	t.Helper()
	mem := NewMemStorage()
	storages, err := newStorage(mem.Options(resource))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	ctx, stored := SeedObject(t, mem, storages[resource].(*registry.REST), obj)
	return ctx, storages, stored
}

// SeedObject stores obj in mem at its key in store, as a create would have
// left it, and returns a request context in obj's namespace and the stored
// copy.
func SeedObject[T runtime.Object](t testing.TB, mem *MemStorage, store *registry.REST, obj T) (context.Context, T) {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("meta.Accessor: %v", err)
	}
	ctx := genericapirequest.WithNamespace(context.Background(), m.GetNamespace())
	key, err := store.KeyFunc(ctx, m.GetName())
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return ctx, mem.Seed(t, key, obj).(T)
}

// UpdateSeeded seeds old as Seeded does, then updates it as a client's PUT
// does, through the store of resource or, with status, its status
// subresource, to the stored copy changed by change; it returns what the
// update returned, and its error.
func UpdateSeeded[T runtime.Object](t testing.TB, newStorage NewStorageFunc, resource string, status bool, old T, change func(T)) (T, error) {
	t.Helper()
	ctx, storages, current := Seeded(t, newStorage, resource, old)
	m, err := meta.Accessor(current)
	if err != nil {
		t.Fatalf("meta.Accessor: %v", err)
	}
	out, err := Update(ctx, storages, resource, status, m.GetName(), Modified(current, change))
	got, _ := out.(T)
	return got, err
}
