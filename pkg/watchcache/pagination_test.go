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
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// countingStorage counts the LISTs that reach etcd once the cache is ready.
type countingStorage struct {
	storage.Interface
	lists atomic.Int64
}

func (s *countingStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	s.lists.Add(1)
	return s.Interface.GetList(ctx, key, opts, listObj)
}

// newSnapshotCache is a ready cache with snapshots over s (counted) on clk.
func newSnapshotCache(t testing.TB, s storage.Interface, clk clock.WithTicker) (*Cache, *countingStorage) {
	t.Helper()
	counting := &countingStorage{Interface: s}
	cfg := podCacheConfig(counting)
	cfg.Clock = clk
	cfg.Snapshots = true
	cfg.ProgressNotify = true
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, "the cache to be ready", c.Ready)
	return c, counting
}

func podsAt(t *testing.T, s storage.Interface, opts storage.ListOptions) *example.PodList {
	t.Helper()
	list := &example.PodList{}
	if opts.Predicate.Label == nil {
		opts.Predicate = storage.Everything
	}
	opts.Recursive = true
	if err := s.GetList(context.Background(), "/pods/", opts, list); err != nil {
		t.Fatalf("list %+v: %v", opts, err)
	}
	return list
}

func exactly(rv uint64) storage.ListOptions {
	return storage.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
}

// namesAndRVs is what two LISTs must agree on.
func namesAndRVs(l *example.PodList) string {
	var b strings.Builder
	for _, p := range l.Items {
		fmt.Fprintf(&b, "%s@%s ", p.Name, p.ResourceVersion)
	}
	return b.String()
}

// TestPagingWhileWritersRun pages through pods with small pages while
// writers create, update and delete them: every paging must equal etcd's
// state at its first page's RV, and its continuations must come from the
// cache's snapshots, not from etcd.
func TestPagingWhileWritersRun(t *testing.T) {
	s, _ := newEtcdStore(t)
	for i := range 60 {
		createPod(t, s, fmt.Sprintf("p%03d", i))
	}
	c, counting := newSnapshotCache(t, s, clock.RealClock{})

	ctx, stop := context.WithCancel(context.Background())
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() { churn(ctx, t, s, w) })
	}
	defer func() {
		stop()
		writers.Wait()
	}()

	for paging := range 10 {
		var got example.PodList
		opts := storage.ListOptions{Predicate: storage.Everything}
		opts.Predicate.Limit = 7
		first := true
		before := counting.lists.Load()
		var remaining []int64 // after each page but the last
		for {
			page := podsAt(t, c, opts)
			got.Items = append(got.Items, page.Items...)
			if page.RemainingItemCount != nil {
				remaining = append(remaining, *page.RemainingItemCount)
			}
			if first {
				got.ResourceVersion, first = page.ResourceVersion, false
			}
			if page.ResourceVersion != got.ResourceVersion {
				t.Fatalf("paging %d: a page at RV %s, the first at %s", paging, page.ResourceVersion, got.ResourceVersion)
			}
			if page.Continue == "" {
				break
			}
			opts.Predicate.Continue = page.Continue
		}
		if n := counting.lists.Load() - before; n != 0 {
			t.Errorf("paging %d: %d LISTs reached etcd, want none", paging, n)
		}
		rv, _ := storage.APIObjectVersioner{}.ParseResourceVersion(got.ResourceVersion)
		want := podsAt(t, s, exactly(rv))
		if namesAndRVs(&got) != namesAndRVs(want) {
			t.Fatalf("paging %d at RV %d:\n got %s\nwant %s", paging, rv, namesAndRVs(&got), namesAndRVs(want))
		}
		pages := (len(got.Items) + 6) / 7
		if len(remaining) != pages-1 {
			t.Fatalf("paging %d: %d pages carried remainingItemCount, want %d (all but the last)", paging, len(remaining), pages-1)
		}
		for i, n := range remaining {
			if want := int64(len(got.Items) - 7*(i+1)); n != want {
				t.Errorf("paging %d, page %d: remainingItemCount %d, want %d", paging, i, n, want)
			}
		}
	}
}

// churn creates, updates and deletes pods of writer w until ctx ends.
func churn(ctx context.Context, t *testing.T, s storage.Interface, w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 1))
	for i := 0; ctx.Err() == nil; i++ {
		name := fmt.Sprintf("w%d-%02d", w, rng.IntN(20))
		key := "/pods/ns/" + name
		var err error
		switch rng.IntN(3) {
		case 0:
			err = s.Create(ctx, key, &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}, &example.Pod{}, 0)
		case 1:
			err = s.GuaranteedUpdate(ctx, key, &example.Pod{}, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				pod := in.(*example.Pod)
				pod.Spec.NodeName = fmt.Sprint(i)
				return pod, nil, nil
			}, nil)
		default:
			err = s.Delete(ctx, key, &example.Pod{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
		}
		if err != nil && !storage.IsExist(err) && !storage.IsNotFound(err) && ctx.Err() == nil {
			t.Errorf("writer %d: %v", w, err)
			return
		}
	}
}

// TestSnapshotsExpireWithTheHistoryWindow drives the cache's clock past its
// history window: reads at RVs whose events have left it go to etcd, and a
// compaction drops the snapshots before it.
func TestSnapshotsExpireWithTheHistoryWindow(t *testing.T) {
	s, client := newEtcdStore(t)
	fake := clocktesting.NewFakeClock(time.Now())
	c, counting := newSnapshotCache(t, s, fake)
	// Age alone decides, as it does once a resource has more events than
	// the 100 the history always keeps.
	c.mu.Lock()
	c.history.minEvents = 1
	c.mu.Unlock()
	rv1 := createPod(t, s, "a")
	rv2 := createPod(t, s, "b")
	waitFresh(t, c, rv2)

	// exactFrom lists at exactly rv through the cache and reports whether
	// etcd served it.
	exactFrom := func(rv uint64, want string) bool {
		t.Helper()
		before := counting.lists.Load()
		if got := podNames(podsAt(t, c, exactly(rv))); strings.Join(got, ",") != want {
			t.Errorf("exact %d: got %v, want %s", rv, got, want)
		}
		return counting.lists.Load() > before
	}
	if exactFrom(rv1, "a") || exactFrom(rv2, "a,b") {
		t.Fatal("exact reads inside the window reached etcd")
	}

	fake.Step(DefaultHistoryWindow + time.Second)
	rv3 := createPod(t, s, "c") // drops the events of a and b from the window
	waitFresh(t, c, rv3)
	if !exactFrom(rv1, "a") {
		t.Error("exact read before the window: served by the cache, want etcd")
	}
	if exactFrom(rv2, "a,b") || exactFrom(rv3, "a,b,c") {
		t.Error("exact read at the window's start: reached etcd, want a snapshot")
	}

	// Compact etcd at rv3 as a server's compactor does; once the store has
	// seen it, the cache's poll drops the snapshot at rv2.
	if _, _, _, err := etcd3.Compact(context.Background(), client, 0, int64(rv3)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the store to see the compaction", func() bool { return s.CompactRevision() == int64(rv3) })
	waitFor(t, "the cache to drop the compacted snapshots", func() bool {
		fake.Step(tickInterval)
		c.mu.RLock()
		defer c.mu.RUnlock()
		_, ok := c.snaps.at(rv2)
		return !ok
	})
	opts := exactly(rv2)
	opts.Recursive, opts.Predicate = true, storage.Everything
	err := c.GetList(context.Background(), "/pods/", opts, &example.PodList{})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("exact read at %d after compacting at %d: got %v, want 410 from etcd", rv2, rv3, err)
	}
	if exactFrom(rv3, "a,b,c") {
		t.Error("exact read at the compaction revision reached etcd, want a snapshot")
	}
}

func waitFresh(t *testing.T, c *Cache, rv uint64) {
	t.Helper()
	if err := c.waitUntilFresh(context.Background(), rv, wait.ForeverTestTimeout); err != nil {
		t.Fatal(err)
	}
}

// TestContinueTokensWorkOnBothPaths continues the cache's first page on
// etcd and etcd's first page on the cache: the same items either way.
func TestContinueTokensWorkOnBothPaths(t *testing.T) {
	s, _ := newEtcdStore(t)
	for i := range 5 {
		createPod(t, s, fmt.Sprintf("p%d", i))
	}
	c, counting := newSnapshotCache(t, s, clock.RealClock{})
	paged := func(first, rest storage.Interface) string {
		opts := storage.ListOptions{Predicate: storage.Everything}
		opts.Predicate.Limit = 2
		page := podsAt(t, first, opts)
		all := namesAndRVs(page)
		for page.Continue != "" {
			opts.Predicate.Continue = page.Continue
			page = podsAt(t, rest, opts)
			all += namesAndRVs(page)
		}
		return all
	}
	want := namesAndRVs(podsAt(t, s, storage.ListOptions{}))
	before := counting.lists.Load()
	if got := paged(c, s); got != want {
		t.Errorf("cache's token on etcd: got %s, want %s", got, want)
	}
	if got := paged(s, c); got != want {
		t.Errorf("etcd's token on the cache: got %s, want %s", got, want)
	}
	if n := counting.lists.Load() - before; n != 0 {
		t.Errorf("%d of the cache's LISTs reached etcd, want none", n)
	}
}

// FuzzContinueTokenOnCache sends arbitrary continue tokens to the cache:
// it answers with a page inside the listed prefix, or with 400 (malformed),
// 410 (compacted) or a too-large-RV error, and never panics.
func FuzzContinueTokenOnCache(f *testing.F) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, seed := range []string{
		"", "!!!", enc("{}"), enc("null"),
		enc(`{"v":"meta.k8s.io/v1","rv":2,"start":"p1\u0000"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":-1,"start":"p1\u0000"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":3,"start":"../../x"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":3,"start":"/"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":0,"start":"p1"}`),
		enc(`{"v":"meta.k8s.io/v2","rv":3,"start":"p1"}`),
		enc(`{"v":"meta.k8s.io/v1","rv":99999999,"start":"p1"}`), // from the future: 504 after 3s
	} {
		f.Add(seed)
	}
	s, _ := newEtcdStore(f)
	for i := range 5 {
		createPod(f, s, fmt.Sprintf("p%d", i))
	}
	c, _ := newSnapshotCache(f, s, clock.RealClock{})
	f.Fuzz(func(t *testing.T, token string) {
		opts := storage.ListOptions{Recursive: true, Predicate: storage.Everything}
		opts.Predicate.Limit = 2
		opts.Predicate.Continue = token
		list := &example.PodList{}
		err := c.GetList(context.Background(), "/pods/ns", opts, list)
		switch {
		case err == nil:
			for _, p := range list.Items {
				if p.Namespace != "ns" {
					t.Errorf("continue=%q: got pod %s/%s outside the listed namespace", token, p.Namespace, p.Name)
				}
			}
		case apierrors.IsBadRequest(err), apierrors.IsResourceExpired(err), apierrors.IsGone(err), storage.IsTooLargeResourceVersion(err):
		default:
			t.Errorf("continue=%q: got %v, want a page, 400, 410 or too large RV", token, err)
		}
	})
}
