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
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/ptr"
)

func TestWatchFromBeforeTheListGets410Expired(t *testing.T) {
	s, _ := newEtcdStore(t)
	first := createPod(t, s, "a")
	createPod(t, s, "b")
	c := newConformanceCacheOn(t, s)
	w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(first - 1), Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := receive(t, w)
	status, isStatus := ev.Object.(*metav1.Status)
	if !ok || ev.Type != watch.Error || !isStatus || status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
		t.Fatalf("got %v %+v, want one ERROR event with a 410 Expired status", ev.Type, ev.Object)
	}
	if _, open := <-w.ResultChan(); open {
		t.Error("the error watcher did not close after its ERROR event")
	}
}

// TestAWatchThatCannotReachEtcdGetsAnErrorEvent: a watch whose start needs
// etcd's current revision (a watch-list or a watch from "now") and cannot
// get it, here because the request's deadline has passed (timeoutSeconds
// below 0), answers as upstream's cacher does: a stream of one ERROR event
// with an internal error, not a failed request.
func TestAWatchThatCannotReachEtcdGetsAnErrorEvent(t *testing.T) {
	s, _ := newEtcdStore(t)
	createPod(t, s, "a")
	c := newConformanceCacheOn(t, s)
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	for name, opts := range map[string]storage.ListOptions{
		"watch-list":     {SendInitialEvents: ptr.To(true), Predicate: storage.Everything},
		"watch from now": {SendInitialEvents: ptr.To(false), Predicate: storage.Everything},
	} {
		opts.Recursive = true
		w, err := c.Watch(ctx, "/pods/", opts)
		if err != nil {
			t.Fatalf("%s: got %v, want a watch", name, err)
		}
		ev, ok := receive(t, w)
		status, isStatus := ev.Object.(*metav1.Status)
		if !ok || ev.Type != watch.Error || !isStatus || status.Code != http.StatusInternalServerError || status.Reason != metav1.StatusReasonInternalError ||
			!strings.Contains(status.Message, context.DeadlineExceeded.Error()) {
			t.Errorf("%s: got %v %+v, want one ERROR event with a 500 InternalError status", name, ev.Type, ev.Object)
		}
	}
}

// TestSlowWatcherCatchesUpWithoutBlockingOthers: a watcher that falls
// more than a buffer behind is not closed but replays what it missed from
// the history, in order, with no gap and no duplicate, while the others
// are served at once.
func TestSlowWatcherCatchesUpWithoutBlockingOthers(t *testing.T) {
	s, _ := newEtcdStore(t)
	c := newConformanceCacheOn(t, s)
	ctx := context.Background()
	opts := storage.ListOptions{Recursive: true, Predicate: storage.Everything}
	slow, err := c.Watch(ctx, "/pods/", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	fast, err := c.Watch(ctx, "/pods/", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	const n = 3*defaultWatchBufferSize + replayChunk // several buffers, more than a chunk
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("p%04d", i))
	}
	received := make(chan []string)
	go func() { received <- names(t, fast, n) }()
	for _, name := range want {
		createPod(t, s, name)
	}
	if got := <-received; !slices.Equal(got, want) {
		t.Fatalf("fast watcher got %v, want %v", got, want)
	}
	c.mu.RLock()
	lagging := slow.(*watcher).lagging
	c.mu.RUnlock()
	if !lagging {
		t.Fatal("the slow watcher is not lagging: the test did not make it fall behind")
	}
	// Now the slow client reads: everything, in order, then live events again.
	if got := names(t, slow, n); !slices.Equal(got, want) {
		t.Fatalf("slow watcher got %v, want %v", got, want)
	}
	createPod(t, s, "live")
	if got := names(t, slow, 1); got[0] != "live" {
		t.Errorf("after catching up, got %v, want the live event", got)
	}
	c.mu.RLock()
	lagging = slow.(*watcher).lagging
	c.mu.RUnlock()
	if lagging {
		t.Error("the slow watcher is still lagging after catching up")
	}
}

// TestLaggingWatcherPastTheHistoryIsClosed: a lagging watcher whose
// position has left the history is closed, as upstream closes a watcher
// that falls behind: its client resumes from its last event.
func TestLaggingWatcherPastTheHistoryIsClosed(t *testing.T) {
	s, _ := newEtcdStore(t)
	cfg := podCacheConfig(s)
	cfg.WatchBufferSize = 4 // it lags after a few writes
	cfg.MaxEvents = cfg.WatchBufferSize + 10
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	if err := c.waitUntilFresh(context.Background(), 1, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	slow, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	// resultBufferSize events fill its result channel and its goroutine
	// blocks; WatchBufferSize more fill its input; then it lags, and the
	// history (MaxEvents) moves past where it lags from.
	total := resultBufferSize + 1 + cfg.WatchBufferSize + 1 + 3*cfg.MaxEvents
	var last uint64
	for i := range total {
		last = createPod(t, s, fmt.Sprintf("p%04d", i))
	}
	// Once the cache has dispatched every write, the watcher's position has
	// left the history whatever the scheduling: it has read nothing yet.
	if err := c.waitUntilFresh(context.Background(), last, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	got, timeout := 0, time.After(30*time.Second)
	for closed := false; !closed; {
		select {
		case _, ok := <-slow.ResultChan():
			if ok {
				got++
			}
			closed = !ok
		case <-timeout:
			t.Fatalf("the watcher is still open after %d of %d events; want it closed once its position left the history", got, total)
		}
	}
	if got >= total {
		t.Errorf("got all %d events; want the watcher closed once its position left the history", got)
	}
}

// names reads n events from w and returns their objects' names; it fails
// the test if w closes first or takes more than 30s.
func names(t *testing.T, w watch.Interface, n int) []string {
	t.Helper()
	var out []string
	timeout := time.After(30 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Errorf("watch closed after %d of %d events", len(out), n)
				return out
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Errorf("event %s: %v", ev.Type, err)
				return out
			}
			out = append(out, m.GetName())
		case <-timeout:
			t.Errorf("got %d of %d events in 30s", len(out), n)
			return out
		}
	}
	return out
}

// TestChurnElsewhereDoesNotCloseAWatcher: a watcher that reads nothing
// while another namespace (or, by selector, other objects) churns through
// more than its buffer is still open afterwards and gets its own events:
// dispatch offers a watcher only the events it can see.
func TestChurnElsewhereDoesNotCloseAWatcher(t *testing.T) {
	s, _ := newEtcdStore(t)
	c := newConformanceCacheOn(t, s)
	ctx := context.Background()
	otherNamespace, err := c.Watch(ctx, "/pods/other/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer otherNamespace.Stop()
	pred := storage.Everything
	pred.Label = labels.SelectorFromSet(labels.Set{"app": "quiet"})
	pred.GetAttrs = storage.DefaultNamespaceScopedAttr
	otherLabel, err := c.Watch(ctx, "/pods/", storage.ListOptions{Recursive: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer otherLabel.Stop()

	createMine := func(name string) {
		t.Helper()
		pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "other", Labels: map[string]string{"app": "quiet"}}}
		if err := s.Create(ctx, "/pods/other/"+name, pod, &example.Pod{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	// Unread events of their own fill the watchers' result buffers, so
	// their goroutines block as a slow client's do...
	var mine []string
	for i := range resultBufferSize + 1 {
		mine = append(mine, fmt.Sprintf("mine%02d", i))
		createMine(mine[i])
	}
	// ... while another namespace, with other labels, churns.
	for i := range defaultWatchBufferSize + 50 {
		createLabeledPod(t, s, fmt.Sprintf("busy%03d", i), map[string]string{"app": "busy"})
	}
	mine = append(mine, "last")
	createMine("last")
	for name, w := range map[string]watch.Interface{"namespace other": otherNamespace, "label app=quiet": otherLabel} {
		for _, want := range mine {
			ev, ok := receive(t, w)
			if !ok {
				t.Fatalf("watch of %s: closed before ADDED %s, want it kept open", name, want)
			}
			if m, err := meta.Accessor(ev.Object); ev.Type != watch.Added || err != nil || m.GetName() != want {
				t.Fatalf("watch of %s: got %s %v, want ADDED %s", name, ev.Type, ev.Object, want)
			}
		}
	}
}
