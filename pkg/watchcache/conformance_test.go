package watchcache

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
)

// podAttrs is what upstream's cacher tests index example pods by.
func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod := obj.(*example.Pod)
	return labels.Set(pod.Labels), fields.Set{"metadata.name": pod.Name, "metadata.namespace": pod.Namespace, "spec.nodeName": pod.Spec.NodeName}, nil
}

// newConformanceCache is a ready cache over a fresh etcd3 store of example
// pods, keyed as upstream's cacher tests key them.
func newConformanceCache(t *testing.T) *Cache {
	t.Helper()
	s, _ := newEtcdStore(t)
	return newConformanceCacheOn(t, s)
}

// newConformanceCacheOn is a ready cache over s.
func newConformanceCacheOn(t *testing.T, s storage.Interface) *Cache {
	t.Helper()
	c, err := New(Config{
		Storage:        s,
		ResourcePrefix: "/pods/",
		NewListFunc:    func() runtime.Object { return &example.PodList{} },
		KeyFunc:        func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) },
		GetAttrsFunc:   podAttrs,
		ProgressNotify: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	if err := c.waitUntilFresh(context.Background(), 1, 30*time.Second); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	return c
}

// Upstream's storage conformance tests for watches, called as upstream's
// cacher_test.go calls them. The rest of the suite comes with the rest of the cache.
func TestConformanceWatch(t *testing.T) {
	storagetesting.RunTestWatch(context.Background(), t, newConformanceCache(t))
}

func TestConformanceDeleteTriggerWatch(t *testing.T) {
	storagetesting.RunTestDeleteTriggerWatch(context.Background(), t, newConformanceCache(t))
}

func TestConformanceWatchFromNonZero(t *testing.T) {
	storagetesting.RunTestWatchFromNonZero(context.Background(), t, newConformanceCache(t))
}

func TestConformanceNamespaceScopedWatch(t *testing.T) {
	storagetesting.RunTestNamespaceScopedWatch(context.Background(), t, newConformanceCache(t))
}
