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

package watchcache

// The harness upstream's storage conformance suite runs against our Cache,
// adapted from k8s.io/apiserver v0.37.2 pkg/storage/cacher/cacher_test.go and
// cacher_testing_utils_test.go (Apache-2.0): the same etcd3 store (protobuf
// codec, "/registry" path prefix, one injected LIST error), callbacks and wrappers.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/utils/clock"
)

// examplev1ProtoCodec is the codec upstream's cacher tests store pods with.
var examplev1ProtoCodec = func() runtime.Codec {
	pb := protobuf.NewSerializer(scheme, scheme)
	return codecs.CodecForVersions(pb, pb, schema.GroupVersions{examplev1.SchemeGroupVersion}, nil)
}()

// conformanceOptions are upstream's setupOptions that our cache has a use for.
type conformanceOptions struct {
	keyFunc func(runtime.Object) (string, error)
	// indexFields are the fields upstream's cacher indexes (its Indexers and IndexerFuncs).
	indexFields []string
	codec       runtime.Codec
	transformer value.Transformer
}

type conformanceOption func(*conformanceOptions)

func withClusterScopedKeyFunc(o *conformanceOptions) {
	o.keyFunc = func(obj runtime.Object) (string, error) { return storage.NoNamespaceKeyFunc("/pods/", obj) }
}

// withNodeNameAndNamespaceIndex mirrors the indexes of pkg/registry/core/pod/strategy.go, as upstream.
func withNodeNameAndNamespaceIndex(o *conformanceOptions) {
	o.indexFields = []string{"spec.nodeName", "metadata.namespace"}
}

func withCodec(codec runtime.Codec) conformanceOption {
	return func(o *conformanceOptions) { o.codec = codec }
}

func withTransformer(transformer value.Transformer) conformanceOption {
	return func(o *conformanceOptions) { o.transformer = transformer }
}

// conformanceSetup is a ready cache built as upstream's testSetupWithEtcdServer
// builds its cacher, with what the suite's callbacks need.
type conformanceSetup struct {
	cache *Cache
	// etcd is the cache's etcd; its Kubernetes interface is a storagetesting.KubernetesRecorder.
	etcd *kubernetes.Client
	// storage is what the cache lists and watches: the etcd3 store behind
	// one injected LIST error.
	storage storage.Interface
}

func (s *conformanceSetup) recorder() *storagetesting.KubernetesRecorder {
	return s.etcd.Kubernetes.(*storagetesting.KubernetesRecorder)
}

func newConformanceSetup(t *testing.T, opts ...conformanceOption) *conformanceSetup {
	t.Helper()
	o := conformanceOptions{
		keyFunc:     func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) },
		codec:       examplev1ProtoCodec,
		transformer: identity.NewEncryptCheckTransformer(),
	}
	for _, opt := range opts {
		opt(&o)
	}
	client, etcdStorage := newConformanceEtcdStorage(t, o.codec, o.transformer)
	// Inject one LIST error so the relist path is exercised, as upstream does
	// (upstream injects none when client-go's WatchListClient makes its
	// reflector WATCH instead of LIST; our cache always LISTs).
	wrapped := &storagetesting.StorageInjectingListErrors{Interface: etcdStorage, Errors: 1}
	c, err := New(Config{
		Storage:          wrapped,
		Versioner:        storage.APIObjectVersioner{},
		GroupResource:    schema.GroupResource{Resource: "pods"},
		ResourcePrefix:   "/pods/",
		KeyFunc:          o.keyFunc,
		GetAttrsFunc:     podAttrs,
		NewFunc:          func() runtime.Object { return &example.Pod{} },
		NewListFunc:      func() runtime.Object { return &example.PodList{} },
		IndexFields:      o.indexFields,
		Clock:            clock.RealClock{},
		ProgressNotify:   true,
		WatchInitialized: utilflowcontrol.WatchInitialized,
		Snapshots:        utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot),
		EstimateSizes:    utilfeature.DefaultFeatureGate.Enabled(features.SizeBasedListCostEstimate),
	})
	if err != nil {
		t.Fatalf("Failed to initialize cache: %v", err)
	}
	runCache(t, c)
	ctx := context.Background()
	// As upstream: wait for the injected error to be consumed, then for the cache to be ready.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return wrapped.ErrorsConsumed()
	}); err != nil {
		t.Fatalf("Failed to inject list errors: %v", err)
	}
	if err := c.waitUntilFresh(ctx, 1, wait.ForeverTestTimeout); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	return &conformanceSetup{cache: c, etcd: client, storage: wrapped}
}

// newConformanceEtcdStorage is upstream's newEtcdTestStorageWithOptions.
func newConformanceEtcdStorage(t *testing.T, codec runtime.Codec, transformer value.Transformer) (*kubernetes.Client, storage.Interface) {
	t.Helper()
	client := testserver.RunEtcd(t, nil)
	t.Cleanup(func() { _ = client.Close() }) // after the store and the cache stop; upstream leaks it
	versioner := storage.APIObjectVersioner{}
	compactor := etcd3.NewCompactor(client.Client, 0, clock.RealClock{}, nil)
	t.Cleanup(compactor.Stop)
	s, err := etcd3.New(client, compactor, codec,
		func() runtime.Object { return &example.Pod{} }, func() runtime.Object { return &example.PodList{} },
		etcd3testing.PathPrefix(), "/pods/", schema.GroupResource{Resource: "pods"}, transformer,
		etcd3.NewDefaultLeaseManagerConfig(), etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return client, s
}

// checkStorageInvariants is a no-op: the cache passes creation to its storage (adapted from upstream).
func checkStorageInvariants(ctx context.Context, t *testing.T, key string) {}

// increaseRVFunc is adapted from upstream's cacher_testing_utils_test.go.
func increaseRVFunc(client *clientv3.Client) storagetesting.IncreaseRVFunc {
	return func(ctx context.Context, t *testing.T) int64 {
		resp, err := client.KV.Put(ctx, "increaseRV", "ok")
		if err != nil {
			t.Fatalf("Could not update increaseRV: %v", err)
		}
		return resp.Header.Revision
	}
}

// compactStore compacts etcd at resourceVersion; adapted from upstream's
// cacher_testing_utils_test.go. Upstream then waits (with ListFromCacheSnapshot
// on) for the store to observe the compaction and has its cacher drop the
// snapshots before it.
func compactStore(c *Cache, client *clientv3.Client) storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		var currentVersion int64
		currentVersion, _, _, err = etcd3.Compact(ctx, client, currentVersion, int64(rv))
		if err != nil {
			_, _, _, err = etcd3.Compact(ctx, client, currentVersion, int64(rv))
		}
		if err != nil {
			t.Fatal(err)
		}
		if !utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot) {
			return
		}
		// Wait for the store to observe the compaction, then drop the
		// snapshots before it as the cache's poll would.
		for c.cfg.Storage.CompactRevision() != int64(rv) {
			select {
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
		c.compactSnapshots()
	}
}

// compactWatch compacts the cache's history and etcd at resourceVersion, so
// watches from before it get 410 Gone; adapted from upstream's cacher_testing_utils_test.go.
func compactWatch(c *Cache, client *clientv3.Client) storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, resourceVersion string) {
		rv, err := storage.APIObjectVersioner{}.ParseResourceVersion(resourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.waitUntilFresh(ctx, rv, wait.ForeverTestTimeout); err != nil {
			t.Fatalf("WatchCache didn't caught up to RV: %v", rv)
		}
		// Our watchers unregister asynchronously after Stop; upstream's synchronously.
		_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
			c.mu.RLock()
			defer c.mu.RUnlock()
			return len(c.watchers.all) == 0, nil
		})
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.rv < rv {
			t.Fatalf("Can't compact into a future version: %v", resourceVersion)
		}
		if len(c.watchers.all) > 0 {
			// As upstream: the cache does not support compaction, and the
			// suite does not compact with watchers open.
			t.Error("Open watchers are not supported during compaction")
		}
		c.history.dropThrough(rv)
		if _, err := client.Compact(ctx, int64(rv)); err != nil {
			t.Fatalf("Could not compact: %v", err)
		}
	}
}

// createWrapper's Create returns once the cache serves the created object;
// adapted from upstream's cacher_test.go.
type createWrapper struct {
	*Cache
}

func (c *createWrapper) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := c.Cache.Create(ctx, key, obj, out, ttl); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
		currentObj := c.cfg.NewFunc()
		err := c.Cache.Get(ctx, key, storage.GetOptions{ResourceVersion: "0"}, currentObj)
		if err != nil {
			if storage.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return apiequality.Semantic.DeepEqual(currentObj, out), nil
	})
}

// testTransformer fails reads on demand; adapted from upstream's cacher_test.go.
type testTransformer struct {
	value.Transformer
	fail atomic.Bool
}

func (tt *testTransformer) setFailing(c bool) {
	tt.fail.Store(c)
}

func (tt *testTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx value.Context) (out []byte, stale bool, err error) {
	if tt.fail.Load() {
		return nil, false, errors.New("synthetic error")
	}
	return tt.Transformer.TransformFromStorage(ctx, data, dataCtx)
}

// testCodec fails decoding on demand; adapted from upstream's cacher_test.go.
type testCodec struct {
	runtime.Codec
	fail atomic.Bool
}

func (tc *testCodec) setFailing(c bool) {
	tc.fail.Store(c)
}

func (tc *testCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if tc.fail.Load() {
		return nil, nil, errors.New("synthetic error")
	}
	return tc.Codec.Decode(data, defaults, into)
}

// returnsWithin runs fn, failing t if fn has not returned after d (fn is
// then left blocked). fn may call t.Fatal.
func returnsWithin(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}
