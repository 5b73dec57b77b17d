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
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// MemStorage is the part of storage.Interface the generic store's Create,
// Get, List, Update and Delete use, over a map: enough to drive a
// resource's stores (and their subresources) without etcd. Other methods
// panic (nil Interface).
type MemStorage struct {
	storage.Interface

	// mu guards objects and rv.
	mu      sync.Mutex
	objects map[string]runtime.Object
	rv      uint64
}

// NewMemStorage returns an empty MemStorage.
func NewMemStorage() *MemStorage { return &MemStorage{objects: map[string]runtime.Object{}} }

// Options returns REST options whose decorator hands out s.
func (s *MemStorage) Options(prefix string) generic.RESTOptions { return Options(s, prefix) }

// Options returns REST options whose decorator hands out st (a MemStorage
// wrapped to change some of its answers).
func Options(st storage.Interface, prefix string) generic.RESTOptions {
	return generic.RESTOptions{
		// The codec copies the objects of dry runs.
		StorageConfig:  &storagebackend.ConfigForResource{Config: storagebackend.Config{Codec: api.Codecs.LegacyCodec(api.Scheme.PrioritizedVersionsAllGroups()...)}},
		ResourcePrefix: prefix,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error),
			func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers,
		) (storage.Interface, factory.DestroyFunc, error) {
			return st, func() {}, nil
		},
	}
}

func (s *MemStorage) Versioner() storage.Versioner { return storage.APIObjectVersioner{} }

// Seed stores obj at key with the next resourceVersion and returns the stored copy.
func (s *MemStorage) Seed(t testing.TB, key string, obj runtime.Object) runtime.Object {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.storeLocked(key, obj); err != nil {
		t.Fatalf("seed %s: %v", key, err)
	}
	return s.objects[key].DeepCopyObject()
}

func (s *MemStorage) storeLocked(key string, obj runtime.Object) error {
	s.rv++
	obj = obj.DeepCopyObject()
	if err := s.Versioner().UpdateObject(obj, s.rv); err != nil {
		return err
	}
	s.objects[key] = obj
	return nil
}

func (s *MemStorage) Stored(key string) (runtime.Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	if !ok {
		return nil, false
	}
	return obj.DeepCopyObject(), true
}

func (s *MemStorage) Create(_ context.Context, key string, obj, out runtime.Object, _ uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; ok {
		return storage.NewKeyExistsError(key, 0)
	}
	if err := s.storeLocked(key, obj); err != nil {
		return err
	}
	return copyInto(out, s.objects[key])
}

// GetList lists every object whose key has the prefix key, in key order
// (no selectors, limits or resourceVersions).
func (s *MemStorage) GetList(_ context.Context, key string, _ storage.ListOptions, listObj runtime.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Sorted(maps.Keys(s.objects))
	var items []runtime.Object
	for _, k := range keys {
		if strings.HasPrefix(k, key) {
			items = append(items, s.objects[k].DeepCopyObject())
		}
	}
	if err := meta.SetList(listObj, items); err != nil {
		return err
	}
	return s.Versioner().UpdateList(listObj, max(s.rv, 1), "", nil) // 0 is no resourceVersion
}

func (s *MemStorage) Get(_ context.Context, key string, _ storage.GetOptions, out runtime.Object) error {
	obj, ok := s.Stored(key)
	if !ok {
		return storage.NewKeyNotFoundError(key, 0)
	}
	return copyInto(out, obj)
}

// GuaranteedUpdate runs tryUpdate without the lock, as etcd3's store
// does (it may read or write other keys), and again if the object changed
// meanwhile.
func (s *MemStorage) GuaranteedUpdate(_ context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, _ runtime.Object,
) error {
	for {
		existing, ok := s.Stored(key)
		switch {
		case !ok && !ignoreNotFound:
			return storage.NewKeyNotFoundError(key, 0)
		case !ok:
			// As etcd3's store: tryUpdate sees an empty object (resourceVersion 0).
			existing = reflect.New(reflect.TypeOf(dest).Elem()).Interface().(runtime.Object)
		}
		if err := preconditions.Check(key, existing); err != nil {
			return err
		}
		rv, err := s.Versioner().ObjectResourceVersion(existing)
		if err != nil {
			return err
		}
		updated, _, err := tryUpdate(existing, storage.ResponseMeta{ResourceVersion: rv})
		if err != nil {
			return err
		}
		s.mu.Lock()
		current, ok := s.objects[key]
		var currentRV uint64
		if ok {
			currentRV, _ = s.Versioner().ObjectResourceVersion(current)
		}
		if currentRV != rv {
			s.mu.Unlock()
			continue // changed meanwhile
		}
		err = s.storeLocked(key, updated)
		if err == nil {
			err = copyInto(dest, s.objects[key])
		}
		s.mu.Unlock()
		return err
	}
}

func (s *MemStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, _ runtime.Object, _ storage.DeleteOptions,
) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	existing, ok := s.objects[key]
	if !ok {
		return storage.NewKeyNotFoundError(key, 0)
	}
	if err := preconditions.Check(key, existing); err != nil {
		return err
	}
	if err := validateDeletion(ctx, existing); err != nil {
		return err
	}
	delete(s.objects, key)
	return copyInto(out, existing)
}

func copyInto(dst, src runtime.Object) error {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
	return nil
}
