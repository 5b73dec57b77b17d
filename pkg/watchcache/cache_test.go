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
	goruntime "runtime"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/apitesting"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	if err := example.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := examplev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
}

// newEtcdStore returns upstream's etcd3 store of example pods under /pods on
// a fresh embedded etcd, and a raw client of that etcd.
func newEtcdStore(t testing.TB) (storage.Interface, *clientv3.Client) {
	t.Helper()
	client := testserver.RunEtcd(t, nil)
	// Closed after the store and the cache stop, before etcd: an open
	// client holds etcd's graceful stop for its whole timeout.
	t.Cleanup(func() { _ = client.Close() })
	versioner := storage.APIObjectVersioner{}
	codec := apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)
	compactor := etcd3.NewCompactor(client.Client, 0, clock.RealClock{}, nil)
	t.Cleanup(compactor.Stop)
	s, err := etcd3.New(client, compactor, codec,
		func() runtime.Object { return &example.Pod{} }, func() runtime.Object { return &example.PodList{} },
		"", "/pods/", schema.GroupResource{Resource: "pods"}, identity.NewEncryptCheckTransformer(),
		etcd3.NewDefaultLeaseManagerConfig(), etcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, client.Client
}

func newTestCache(t *testing.T, s storage.Interface, clk clock.WithTicker) *Cache {
	t.Helper()
	c, err := New(Config{
		Clock:          clk,
		Storage:        s,
		ResourcePrefix: "/pods/",
		NewListFunc:    func() runtime.Object { return &example.PodList{} },
		KeyFunc: func(obj runtime.Object) (string, error) {
			p := obj.(*example.Pod)
			return "/pods/" + p.Namespace + "/" + p.Name, nil
		},
		GetAttrsFunc:   storage.DefaultNamespaceScopedAttr,
		ProgressNotify: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	return c
}

func createPod(t testing.TB, s storage.Interface, name string) uint64 {
	t.Helper()
	return createLabeledPod(t, s, name, nil)
}

func TestCacheFollowsStorage(t *testing.T) {
	s, _ := newEtcdStore(t)
	createPod(t, s, "before")
	c := newTestCache(t, s, nil)

	var last uint64
	for i := range 5 {
		last = createPod(t, s, fmt.Sprintf("p%d", i))
	}
	if err := s.Delete(context.Background(), "/pods/ns/p0", &example.Pod{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	last = createPod(t, s, "sentinel") // written after the deletion
	if err := c.waitUntilFresh(context.Background(), last, 30*time.Second); err != nil {
		t.Fatalf("cache never reached rv %d: %v (at %d)", last, err, c.ResourceVersion())
	}
	c.mu.RLock()
	items, _ := c.store.list("/pods/", "", 0, nil)
	events, err := c.history.since(0)
	c.mu.RUnlock()
	if got := keys(items); got != "/pods/ns/before,/pods/ns/p1,/pods/ns/p2,/pods/ns/p3,/pods/ns/p4,/pods/ns/sentinel" {
		t.Errorf("store: got %s", got)
	}
	if err == nil {
		t.Errorf("history since 0: got %d events, want too old (the cache listed after rv 0)", len(events))
	}
}

// TestCacheResourceVersionAdvancesWithoutEvents writes outside the cached
// prefix: etcd's progress notification must move the cache's RV anyway.
func TestCacheResourceVersionAdvancesWithoutEvents(t *testing.T) {
	s, raw := newEtcdStore(t)
	createPod(t, s, "a") // before the cache starts: part of its list, not of its history
	c := newTestCache(t, s, nil)
	resp, err := raw.Put(context.Background(), "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	target := uint64(resp.Header.Revision)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for c.ResourceVersion() < target {
		if err := s.RequestWatchProgress(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.waitUntilFresh(ctx, target, 100*time.Millisecond); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("cache RV stuck at %d, want %d", c.ResourceVersion(), target)
		}
	}
	c.mu.RLock()
	n := c.history.len()
	c.mu.RUnlock()
	if n != 0 {
		t.Errorf("history: got %d events, want none (progress notifications are not events)", n)
	}
}

func TestWaitUntilFreshTimesOutWithTooLargeResourceVersion(t *testing.T) {
	s, _ := newEtcdStore(t)
	fake := clocktesting.NewFakeClock(time.Now())
	c := newTestCache(t, s, fake)
	result := make(chan error, 1)
	go func() { result <- c.waitUntilFresh(context.Background(), 1<<40, 3*time.Second) }()
	// Step past the timeout until the wait gives up: a step before it armed
	// its timer only moves the clock on.
	deadline := time.After(wait.ForeverTestTimeout)
	for {
		select {
		case err := <-result:
			if !storage.IsTooLargeResourceVersion(err) {
				t.Errorf("got %v, want a too-large-resource-version error", err)
			}
			return
		case <-deadline:
			t.Fatal("waitUntilFresh never timed out")
		default:
			fake.Step(3 * time.Second)
			goruntime.Gosched()
		}
	}
}

// runCache runs c until the test ends.
func runCache(t testing.TB, c *Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestRequestsToANotReadyCache: until its first list, the cache reports not
// ready; a LIST page without selectors goes to the storage, other LISTs and
// watches wait for the cache (429 if it does not get ready in time).
func TestRequestsToANotReadyCache(t *testing.T) {
	s, _ := newEtcdStore(t)
	createPod(t, s, "a")
	fake := clocktesting.NewFakeClock(time.Now())
	cfg := podCacheConfig(s)
	cfg.Clock = fake
	c, err := New(cfg) // not running: not ready
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ReadinessCheck(); err != storage.ErrStorageNotReady {
		t.Errorf("ReadinessCheck: got %v, want ErrStorageNotReady", err)
	}
	// A page without selectors goes to the storage, as upstream.
	page := storage.Everything
	page.Limit = 10
	list := &example.PodList{}
	if err := c.GetList(context.Background(), "/pods/", storage.ListOptions{Recursive: true, Predicate: page}, list); err != nil || len(list.Items) != 1 {
		t.Errorf("LIST with a limit while not ready: got %d items, %v; want the storage's 1", len(list.Items), err)
	}
	// Other LISTs and watches wait for the cache (a watch on etcd would hold
	// up the cache's progress requests), then get 429 if it does not get ready.
	for _, tc := range []struct {
		name string
		read func() error
	}{
		{"LIST", func() error {
			return c.GetList(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything}, &example.PodList{})
		}},
		{"WATCH", func() error {
			_, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything})
			return err
		}},
	} {
		result := make(chan error, 1)
		go func() { result <- tc.read() }()
		waitFor(t, tc.name+" to wait on the clock", fake.HasWaiters)
		fake.Step(freshnessTimeout)
		if err := <-result; !apierrors.IsTooManyRequests(err) {
			t.Errorf("%s while not ready: got %v, want 429", tc.name, err)
		}
	}
	// A watch whose own deadline (timeoutSeconds) ends first gets 429 too,
	// not the context's error (a 500).
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	if _, err := c.Watch(expired, "/pods/", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything}); !apierrors.IsTooManyRequests(err) {
		t.Errorf("WATCH whose deadline passes while not ready: got %v, want 429", err)
	}
	result := make(chan error, 1)

	// One that starts waiting before the cache is ready is served once it is.
	go func() {
		w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything})
		if err == nil {
			defer w.Stop()
			if ev, ok := <-w.ResultChan(); !ok || ev.Type != watch.Added {
				err = fmt.Errorf("got %v, want the cache's ADDED", ev)
			}
		}
		result <- err
	}()
	runCache(t, c)
	waitFor(t, "the cache to be ready", func() bool { return c.ReadinessCheck() == nil })
	if err := <-result; err != nil {
		t.Errorf("WATCH that waited for the cache: %v", err)
	}
}
