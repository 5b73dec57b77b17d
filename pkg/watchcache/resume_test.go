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
	"net/http"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// breakableStorage lets a test cut the cache's etcd watch, as a lost
// connection or an etcd restart would.
type breakableStorage struct {
	storage.Interface
	mu      sync.Mutex
	current watch.Interface
	watches int
}

func (s *breakableStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err == nil && opts.ProgressNotify { // the cache's own watch
		s.mu.Lock()
		s.current, s.watches = w, s.watches+1
		s.mu.Unlock()
	}
	return w, err
}

func (s *breakableStorage) breakWatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current.Stop()
}

func (s *breakableStorage) watchCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watches
}

// watchAllFrom watches every pod after rv until the test ends.
func watchAllFrom(t *testing.T, c *Cache, rv uint64) watch.Interface {
	t.Helper()
	w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(rv), Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, wait.ForeverTestTimeout, true,
		func(context.Context) (bool, error) { return cond(), nil }); err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestWatchersCarryOnWhenTheCacheWatchBreaks: the cache watches again from
// the last RV it saw, so its watchers get every event once, in order.
func TestWatchersCarryOnWhenTheCacheWatchBreaks(t *testing.T) {
	raw, _ := newEtcdStore(t)
	s := &breakableStorage{Interface: raw}
	start := createPod(t, s, "a")
	c := newConformanceCacheOn(t, s)
	w := watchAllFrom(t, c, start)
	want := []uint64{createPod(t, s, "b")}
	if ev := nextEvent(t, w); eventRV(t, ev) != want[0] {
		t.Fatalf("got %s at %d, want ADDED at %d", ev.Type, eventRV(t, ev), want[0])
	}

	waitFor(t, "the cache to watch", func() bool { return s.watchCount() == 1 })
	s.breakWatch()
	for i := range 3 { // written while the cache may not be watching
		want = append(want, createPod(t, s, fmt.Sprintf("while-broken-%d", i)))
	}
	waitFor(t, "the cache to watch again", func() bool { return s.watchCount() == 2 })
	want = append(want, createPod(t, s, "after"))
	for _, rv := range want[1:] {
		if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != rv {
			t.Fatalf("got %s at %d, want ADDED at %d (no gap, no duplicate)", ev.Type, eventRV(t, ev), rv)
		}
	}
	if got := s.watchCount(); got != 2 {
		t.Errorf("the cache watched %d times, want 2 (no relist)", got)
	}
}

// TestRelistAfterCompactionEndsWatchersOutsideTheWindow: when the RV the
// cache would watch from has been compacted, it relists; its watchers end,
// and resuming from before the relist gets 410 Gone.
func TestRelistAfterCompactionEndsWatchersOutsideTheWindow(t *testing.T) {
	raw, client := newEtcdStore(t)
	s := &breakableStorage{Interface: raw}
	start := createPod(t, s, "a")
	c := newConformanceCacheOn(t, s)
	w := watchAllFrom(t, c, start)

	// Stop the cache's watch and compact etcd past what it saw before it
	// can watch again (it waits a second before it does).
	waitFor(t, "the cache to watch", func() bool { return s.watchCount() == 1 })
	s.mu.Lock()
	s.current.Stop()
	createPod(t, raw, "b")
	latest := createPod(t, raw, "c")
	if _, err := client.Compact(context.Background(), int64(latest)); err != nil { // "b" is gone from etcd's history
		s.mu.Unlock()
		t.Fatal(err)
	}
	s.mu.Unlock()

	for ev := range w.ResultChan() { // a relist closes the watcher
		if eventRV(t, ev) <= start {
			t.Errorf("got %s at %d, not after the watch's start %d", ev.Type, eventRV(t, ev), start)
		}
	}
	waitFor(t, "the cache to relist", func() bool { return c.ResourceVersion() >= latest })
	ev := nextEvent(t, watchAllFrom(t, c, start))
	status, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || status.Code != http.StatusGone {
		t.Fatalf("resuming from %d after the relist: got %s %+v, want an ERROR event with 410", start, ev.Type, ev.Object)
	}
}
