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

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/apitesting"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

// podAttrs is what upstream's cacher tests index example pods by (their GetPodAttrs).
func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod, ok := obj.(*example.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("not a pod: %T", obj)
	}
	return labels.Set(pod.Labels), fields.Set{
		"metadata.name":      pod.Name,
		"metadata.namespace": pod.Namespace,
		"spec.nodeName":      pod.Spec.NodeName,
		"spec.restartPolicy": string(pod.Spec.RestartPolicy),
		"status.phase":       string(pod.Status.Phase),
	}, nil
}

// newConformanceCache is a ready cache built as upstream's cacher tests build theirs.
func newConformanceCache(t *testing.T) *Cache {
	t.Helper()
	return newConformanceSetup(t).cache
}

// podCacheConfig configures a cache of example pods over s, keyed as
// upstream's cacher tests key them.
func podCacheConfig(s storage.Interface) Config {
	return Config{
		Storage:        s,
		ResourcePrefix: "/pods/",
		NewListFunc:    func() runtime.Object { return &example.PodList{} },
		KeyFunc:        func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) },
		GetAttrsFunc:   podAttrs,
		// Upstream's cacher keeps snapshots when its gate is on (the default).
		Snapshots: utilfeature.DefaultFeatureGate.Enabled(features.ListFromCacheSnapshot),
	}
}

// newConformanceCacheOn is a ready cache over s, keyed as upstream's cacher
// tests key pods, indexing indexFields.
func newConformanceCacheOn(t *testing.T, s storage.Interface, indexFields ...string) *Cache {
	t.Helper()
	cfg := podCacheConfig(s)
	cfg.IndexFields = indexFields
	cfg.ProgressNotify = true
	cfg.WatchInitialized = utilflowcontrol.WatchInitialized
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	if err := c.waitUntilFresh(context.Background(), 1, 30*time.Second); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	return c
}

// Upstream's storage conformance suite, called as k8s.io/apiserver v0.37.2
// pkg/storage/cacher/cacher_test.go calls it against its cacher. Not here:
// the benchmarks, and TestMarkConsistent (upstream's consistency checker,
// which the cache does not have).

func TestConformanceCreate(t *testing.T) {
	storagetesting.RunTestCreate(context.Background(), t, newConformanceCache(t), checkStorageInvariants)
}

func TestConformanceCreateWithTTL(t *testing.T) {
	storagetesting.RunTestCreateWithTTL(context.Background(), t, newConformanceCache(t))
}

func TestConformanceCreateWithKeyExist(t *testing.T) {
	storagetesting.RunTestCreateWithKeyExist(context.Background(), t, newConformanceCache(t))
}

func TestConformanceGet(t *testing.T) {
	storagetesting.RunTestGet(context.Background(), t, newConformanceCache(t))
}

func TestConformanceUnconditionalDelete(t *testing.T) {
	storagetesting.RunTestUnconditionalDelete(context.Background(), t, newConformanceCache(t))
}

func TestConformanceConditionalDelete(t *testing.T) {
	storagetesting.RunTestConditionalDelete(context.Background(), t, newConformanceCache(t))
}

func TestConformanceDeleteWithSuggestion(t *testing.T) {
	storagetesting.RunTestDeleteWithSuggestion(context.Background(), t, newConformanceCache(t))
}

func TestConformanceDeleteWithSuggestionAndConflict(t *testing.T) {
	storagetesting.RunTestDeleteWithSuggestionAndConflict(context.Background(), t, newConformanceCache(t))
}

func TestConformanceDeleteWithSuggestionOfDeletedObject(t *testing.T) {
	storagetesting.RunTestDeleteWithSuggestionOfDeletedObject(context.Background(), t, newConformanceCache(t))
}

func TestConformanceValidateDeletionWithSuggestion(t *testing.T) {
	storagetesting.RunTestValidateDeletionWithSuggestion(context.Background(), t, newConformanceCache(t))
}

func TestConformanceValidateDeletionWithOnlySuggestionValid(t *testing.T) {
	storagetesting.RunTestValidateDeletionWithOnlySuggestionValid(context.Background(), t, newConformanceCache(t))
}

func TestConformanceDeleteWithConflict(t *testing.T) {
	storagetesting.RunTestDeleteWithConflict(context.Background(), t, newConformanceCache(t))
}

func TestConformanceDeleteWithConflictAndMissingExpectedTransformOrDecodeError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	transformer := &testTransformer{Transformer: identity.NewEncryptCheckTransformer()}
	c := newConformanceSetup(t, withTransformer(transformer)).cache
	storagetesting.RunTestDeleteWithConflictAndMissingExpectedTransformOrDecodeError(context.Background(), t, c, transformer.setFailing)
}

func TestConformanceDeleteWithConflictAndExpectedTransformError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	transformer := &testTransformer{Transformer: identity.NewEncryptCheckTransformer()}
	c := newConformanceSetup(t, withTransformer(transformer)).cache
	storagetesting.RunTestDeleteExpectedTransformOrDecodeError(context.Background(), t, c, transformer.setFailing)
}

func TestConformanceDeleteWithConflictAndExpectedDecodeError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	// The stored bytes deliberately fail to decode: do not panic on it.
	etcd3.TestOnlySetFatalOnDecodeError(t, false)
	codec := &testCodec{Codec: apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)}
	c := newConformanceSetup(t, withCodec(codec)).cache
	storagetesting.RunTestDeleteExpectedTransformOrDecodeError(context.Background(), t, c, codec.setFailing)
}

func TestConformanceDeleteWithSuggestionAndMissingExpectedTransformOrDecodeError(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.AllowUnsafeMalformedObjectDeletion, true)
	storagetesting.RunTestDeleteWithSuggestionAndMissingExpectedTransformOrDecodeError(context.Background(), t, newConformanceCache(t))
}

func TestConformancePreconditionalDeleteWithSuggestion(t *testing.T) {
	storagetesting.RunTestPreconditionalDeleteWithSuggestion(context.Background(), t, newConformanceCache(t))
}

func TestConformancePreconditionalDeleteWithSuggestionPass(t *testing.T) {
	storagetesting.RunTestPreconditionalDeleteWithOnlySuggestionPass(context.Background(), t, newConformanceCache(t))
}

func TestConformanceListPaging(t *testing.T) {
	storagetesting.RunTestListPaging(context.Background(), t, newConformanceCache(t))
}

// checkStorageCalls is upstream's: a no-op.
func checkStorageCalls(t *testing.T, pageSize, estimatedProcessedObjects uint64) {}

func TestConformanceListContinuation(t *testing.T) {
	storagetesting.RunTestListContinuation(context.Background(), t, newConformanceCache(t), checkStorageCalls)
}

func TestConformanceListPaginationRareObject(t *testing.T) {
	storagetesting.RunTestListPaginationRareObject(context.Background(), t, newConformanceCache(t), checkStorageCalls)
}

func TestConformanceListContinuationWithFilter(t *testing.T) {
	storagetesting.RunTestListContinuationWithFilter(context.Background(), t, newConformanceCache(t), checkStorageCalls)
}

func TestConformanceLists(t *testing.T) {
	// As upstream: with snapshots (our PaginationFromCache) and without.
	for _, listFromCacheSnapshot := range []bool{true, false} {
		t.Run(fmt.Sprintf("ListFromCacheSnapshot=%v", listFromCacheSnapshot), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ListFromCacheSnapshot, listFromCacheSnapshot)
			t.Run("List", func(t *testing.T) {
				t.Parallel()
				s := newConformanceSetup(t)
				storagetesting.RunTestList(context.Background(), t, s.cache, compactStore(s.cache, s.etcd.Client), true, s.recorder())
			})
			t.Run("ConsistentList", func(t *testing.T) {
				t.Parallel()
				s := newConformanceSetup(t)
				storagetesting.RunTestConsistentList(context.Background(), t, s.cache, increaseRVFunc(s.etcd.Client), true, true, listFromCacheSnapshot)
			})
			t.Run("GetListNonRecursive", func(t *testing.T) {
				t.Parallel()
				s := newConformanceSetup(t)
				storagetesting.RunTestGetListNonRecursive(context.Background(), t, increaseRVFunc(s.etcd.Client), s.cache)
			})
		})
	}
}

func TestConformanceCompactRevision(t *testing.T) {
	// As upstream: the etcd3 store observes compactions made by others (here,
	// by compactStore) only through the compact-key watch this gate enables.
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ListFromCacheSnapshot, true)
	s := newConformanceSetup(t)
	storagetesting.RunTestCompactRevision(context.Background(), t, s.cache, increaseRVFunc(s.etcd.Client), compactStore(s.cache, s.etcd.Client))
}

func TestConformanceGetListRecursivePrefix(t *testing.T) {
	storagetesting.RunTestGetListRecursivePrefix(context.Background(), t, newConformanceCache(t))
}

func TestConformanceNamespaceScopedList(t *testing.T) {
	c := newConformanceSetup(t, withNodeNameAndNamespaceIndex).cache
	storagetesting.RunTestNamespaceScopedList(context.Background(), t, c)
}

func TestConformanceGuaranteedUpdateWithTTL(t *testing.T) {
	storagetesting.RunTestGuaranteedUpdateWithTTL(context.Background(), t, newConformanceCache(t))
}

func TestConformanceGuaranteedUpdateWithConflict(t *testing.T) {
	storagetesting.RunTestGuaranteedUpdateWithConflict(context.Background(), t, newConformanceCache(t))
}

func TestConformanceGuaranteedUpdateWithSuggestionAndConflict(t *testing.T) {
	storagetesting.RunTestGuaranteedUpdateWithSuggestionAndConflict(context.Background(), t, newConformanceCache(t))
}

func TestConformanceStats(t *testing.T) {
	for _, sizeBasedListCostEstimate := range []bool{true, false} {
		t.Run(fmt.Sprintf("SizeBasedListCostEstimate=%v", sizeBasedListCostEstimate), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.SizeBasedListCostEstimate, sizeBasedListCostEstimate)
			storagetesting.RunTestStats(context.Background(), t, newConformanceCache(t), examplev1ProtoCodec, identity.NewEncryptCheckTransformer(), sizeBasedListCostEstimate)
		})
	}
}

func TestConformanceKeySchema(t *testing.T) {
	storagetesting.RunTestKeySchema(context.Background(), t, newConformanceCache(t))
}

func TestConformanceWatch(t *testing.T) {
	ctx := context.Background()
	t.Run("Watch", func(t *testing.T) {
		storagetesting.RunTestWatch(ctx, t, newConformanceCache(t))
	})
	t.Run("WatchFromZero", func(t *testing.T) {
		s := newConformanceSetup(t)
		storagetesting.RunTestWatchFromZero(ctx, t, s.cache, compactWatch(s.cache, s.etcd.Client))
	})
	t.Run("DeleteTriggerWatch", func(t *testing.T) {
		storagetesting.RunTestDeleteTriggerWatch(ctx, t, newConformanceCache(t))
	})
	t.Run("WatchFromNonZero", func(t *testing.T) {
		storagetesting.RunTestWatchFromNonZero(ctx, t, newConformanceCache(t))
	})
	t.Run("DelayedWatchDelivery", func(t *testing.T) {
		storagetesting.RunTestDelayedWatchDelivery(ctx, t, newConformanceCache(t))
	})
	t.Run("WatcherTimeout", func(t *testing.T) {
		storagetesting.RunTestWatcherTimeout(ctx, t, newConformanceCache(t))
	})
	t.Run("WatchDeleteEventObjectHaveLatestRV", func(t *testing.T) {
		storagetesting.RunTestWatchDeleteEventObjectHaveLatestRV(ctx, t, newConformanceCache(t))
	})
	t.Run("WatchInitializationSignal", func(t *testing.T) {
		c := newConformanceCache(t)
		// It blocks until the watch signals its initialization: fail rather than hang the binary.
		returnsWithin(t, wait.ForeverTestTimeout, "RunTestWatchInitializationSignal (waiting for utilflowcontrol.WatchInitialized)", func() {
			storagetesting.RunTestWatchInitializationSignal(ctx, t, c)
		})
	})
	t.Run("ClusterScopedWatch", func(t *testing.T) {
		c := newConformanceSetup(t, withClusterScopedKeyFunc, withNodeNameAndNamespaceIndex).cache
		storagetesting.RunTestClusterScopedWatch(ctx, t, c)
	})
	t.Run("NamespaceScopedWatch", func(t *testing.T) {
		c := newConformanceSetup(t, withNodeNameAndNamespaceIndex).cache
		storagetesting.RunTestNamespaceScopedWatch(ctx, t, c)
	})
	t.Run("WatchDispatchBookmarkEvents", func(t *testing.T) {
		storagetesting.RunTestWatchDispatchBookmarkEvents(ctx, t, newConformanceCache(t), true)
	})
	t.Run("WatchBookmarksWithCorrectResourceVersion", func(t *testing.T) {
		storagetesting.RunTestOptionalWatchBookmarksWithCorrectResourceVersion(ctx, t, newConformanceCache(t))
	})
	t.Run("SendInitialEventsBackwardCompatibility", func(t *testing.T) {
		storagetesting.RunSendInitialEventsBackwardCompatibility(ctx, t, newConformanceCache(t))
	})
	t.Run("WatchSemantics", func(t *testing.T) {
		storagetesting.RunWatchSemantics(context.TODO(), t, &createWrapper{Cache: newConformanceCache(t)})
	})
	t.Run("WatchSemanticInitialEventsExtended", func(t *testing.T) {
		storagetesting.RunWatchSemanticInitialEventsExtended(context.TODO(), t, &createWrapper{Cache: newConformanceCache(t)})
	})
	t.Run("WatchListMatchSingle", func(t *testing.T) {
		storagetesting.RunWatchListMatchSingle(context.TODO(), t, &createWrapper{Cache: newConformanceCache(t)})
	})
}
