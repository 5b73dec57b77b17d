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

package storage

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apistorage "k8s.io/apiserver/pkg/storage"
	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/metrics/testutil"

	ourstorage "github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// TestShutdownEndsTheStoragesMadeDuringIt: a storage made once shutdown
// has begun (a CRD changed meanwhile) refuses watches with the shutdown's
// 429, with a watch cache or without, as the storages made before it do.
func TestShutdownEndsTheStoragesMadeDuringIt(t *testing.T) {
	etcd, err := ourstorage.StartEtcd(t.Context(), ourstorage.EtcdConfig{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	for _, cached := range []bool{true, false} {
		s, err := New(Options{WatchCache: cached})
		if err != nil {
			t.Fatal(err)
		}
		decorate := func() (apistorage.Interface, func()) { return configMaps(t, s, etcd.URL()) }
		watch := func(store apistorage.Interface) error {
			w, err := store.Watch(t.Context(), "/configmaps", apistorage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: apistorage.Everything})
			if err == nil {
				w.Stop()
			}
			return err
		}
		before, destroyBefore := decorate()
		if err := watch(before); err != nil {
			t.Fatalf("cached %v: a watch before the shutdown: %v", cached, err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // no final bookmarks to wait for
		s.Shutdown(ctx)
		during, destroyDuring := decorate()
		for name, store := range map[string]apistorage.Interface{"made before": before, "made during": during} {
			if err := watch(store); !errors.Is(err, watchcache.ErrShuttingDown) {
				t.Errorf("cached %v: a watch on the storage %s the shutdown: got %v, want %v", cached, name, err, watchcache.ErrShuttingDown)
			}
		}
		destroyDuring()
		destroyBefore()
		s.WaitDestroyed()
	}
}

// TestStoragesAreDestroyedInParallel: the destroy funcs Decorator returns
// run in the background, in parallel, each once, and WaitDestroyed waits
// for them.
func TestStoragesAreDestroyedInParallel(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var started sync.WaitGroup
	started.Add(2)
	var finished atomic.Int32
	destroy := func() {
		started.Done()
		started.Wait() // until the other has started too
		finished.Add(1)
	}
	a, b := s.inBackground(destroy), s.inBackground(destroy)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		a()
		b()
		a()
	}()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("a destroy func waited for its storage to be destroyed")
	}
	s.WaitDestroyed()
	if n := finished.Load(); n != 2 {
		t.Errorf("WaitDestroyed returned with %d of 2 storages destroyed", n)
	}
}

// TestCacheChecksItselfWhenDestroyed: with ConsistencyCheckerEnv set, a
// watch cache compares itself with etcd once more when it is destroyed,
// however long its period; without it, not (negative control).
func TestCacheChecksItselfWhenDestroyed(t *testing.T) {
	etcd, err := ourstorage.StartEtcd(t.Context(), ourstorage.EtcdConfig{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	checks := func() float64 {
		t.Helper()
		n, err := testutil.GetCounterMetricValue(cachermetrics.StorageConsistencyCheckTotal.WithLabelValues("", "configmaps", "success"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tt := range []struct {
		env  string
		want float64
	}{{env: "1h", want: 1}, {env: "", want: 0}} {
		t.Setenv(ConsistencyCheckerEnv, tt.env)
		s, err := New(Options{WatchCache: true})
		if err != nil {
			t.Fatal(err)
		}
		store, destroy := configMaps(t, s, etcd.URL())
		// A LIST at resourceVersion 0 waits for the cache to be ready: an unready one has nothing to check.
		opts := apistorage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: apistorage.Everything}
		if err := store.GetList(t.Context(), "/configmaps", opts, &corev1.ConfigMapList{}); err != nil {
			t.Fatal(err)
		}
		before := checks()
		destroy()
		s.WaitDestroyed()
		if got := checks() - before; got != tt.want {
			t.Errorf("%s=%q: the destroyed cache checked itself %v times, want %v", ConsistencyCheckerEnv, tt.env, got, tt.want)
		}
	}
}

// configMaps returns s's storage of configmaps in the etcd at etcdURL.
func configMaps(t *testing.T, s *Storages, etcdURL string) (apistorage.Interface, func()) {
	t.Helper()
	config := storagebackend.NewDefaultConfig("/registry", scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion))
	config.Transport.ServerList = []string{etcdURL}
	store, destroy, err := s.Decorator(config.ForResource(schema.GroupResource{Resource: "configmaps"}), "/configmaps",
		func(obj runtime.Object) (string, error) { return apistorage.NamespaceKeyFunc("/configmaps", obj) },
		func() runtime.Object { return &corev1.ConfigMap{} }, func() runtime.Object { return &corev1.ConfigMapList{} },
		apistorage.DefaultNamespaceScopedAttr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store, destroy
}
