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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
	clocktesting "k8s.io/utils/clock/testing"
)

// createLabeledPod creates ns/name with labels and returns its RV.
func createLabeledPod(t testing.TB, s storage.Interface, name string, lbls map[string]string) uint64 {
	t.Helper()
	out := &example.Pod{}
	pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: lbls}}
	if err := s.Create(context.Background(), "/pods/ns/"+name, pod, out, 0); err != nil {
		t.Fatal(err)
	}
	rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(out)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// nextEvent returns w's next event, failing the test if none comes in time
// or w is closed.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	ev, ok := receive(t, w)
	if !ok {
		t.Fatal("watch closed")
	}
	return ev
}

// receive returns w's next event, or false if w is closed, failing the
// test if neither happens in time.
func receive(t *testing.T, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		return ev, ok
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("no event in time")
	}
	return watch.Event{}, false
}

func eventRV(t *testing.T, ev watch.Event) uint64 {
	t.Helper()
	rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// newFakeClockCache is a ready cache over s on a fake clock, with its
// bookmark ticker waiting on that clock.
func newFakeClockCache(t *testing.T, s storage.Interface) (*Cache, *clocktesting.FakeClock) {
	t.Helper()
	fake := clocktesting.NewFakeClock(time.Now())
	c := newTestCache(t, s, fake)
	waitFor(t, "the cache to be ready", c.Ready)
	waitFor(t, "the bookmark ticker", fake.HasWaiters)
	return c, fake
}

// bookmarkCache is a ready cache on a fake clock and a watch of pods
// labelled app=web from now, with bookmarks, whose request ends at deadline.
func bookmarkCache(t *testing.T, deadline time.Duration) (*Cache, storage.Interface, *clocktesting.FakeClock, watch.Interface) {
	t.Helper()
	s, _ := newEtcdStore(t)
	createPod(t, s, "existing")
	c, fake := newFakeClockCache(t, s)
	// The request's deadline is on the fake clock; the context's own
	// (real) deadline is far enough not to end the test's watch.
	ctx, cancel := context.WithDeadline(context.Background(), fake.Now().Add(deadline))
	t.Cleanup(cancel)
	pred := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"}), Field: nil, GetAttrs: storage.DefaultNamespaceScopedAttr, AllowWatchBookmarks: true}
	w, err := c.Watch(ctx, "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(c.ResourceVersion()), Recursive: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return c, s, fake, w
}

func TestPeriodicBookmarkCarriesTheCacheResourceVersion(t *testing.T) {
	c, s, fake, w := bookmarkCache(t, time.Hour)
	// A change the watcher does not see moves the cache's RV past it.
	rv := createLabeledPod(t, s, "db", map[string]string{"app": "db"})
	if err := c.waitUntilFresh(context.Background(), rv, wait.ForeverTestTimeout); err != nil {
		t.Fatal(err)
	}
	fake.Step(bookmarkFrequency) // the cache's ticker sends it
	ev := nextEvent(t, w)
	if ev.Type != watch.Bookmark || eventRV(t, ev) != rv {
		t.Fatalf("got %s at %d, want a BOOKMARK at %d", ev.Type, eventRV(t, ev), rv)
	}
	if _, ok := ev.Object.(*example.Pod); !ok {
		t.Errorf("bookmark object is %T, want an empty *example.Pod", ev.Object)
	}
	if m, _ := meta.Accessor(ev.Object); m.GetName() != "" || len(m.GetAnnotations()) != 0 {
		t.Errorf("bookmark object carries more than its resourceVersion: %+v", ev.Object)
	}
}

func TestBookmarkTiming(t *testing.T) {
	const deadline = 3 * time.Minute
	c, s, fake, w := bookmarkCache(t, deadline)
	start := fake.Now()
	nextBookmark := func() time.Duration {
		c.mu.Lock()
		defer c.mu.Unlock()
		for w := range c.watchers.all {
			if w.nextBookmark.IsZero() {
				return -1
			}
			return w.nextBookmark.Sub(start)
		}
		return -1
	}

	// A bookmark is due after a minute, but on a quiet resource there is
	// nothing to report: the next event the watcher gets is a change.
	fake.Step(bookmarkFrequency)
	c.sendDueBookmarks()
	rv := createLabeledPod(t, s, "web", map[string]string{"app": "web"})
	if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != rv {
		t.Fatalf("got %s at %d, want the ADDED event at %d first: a quiet watcher gets no bookmark", ev.Type, eventRV(t, ev), rv)
	}
	if got := nextBookmark(); got != 2*bookmarkFrequency {
		t.Fatalf("next bookmark at %s, want %s", got, 2*bookmarkFrequency)
	}

	// A change the watcher does not see: the next periodic bookmark reports it.
	rv = createLabeledPod(t, s, "db", map[string]string{"app": "db"})
	if err := c.waitUntilFresh(context.Background(), rv, wait.ForeverTestTimeout); err != nil {
		t.Fatal(err)
	}
	fake.SetTime(start.Add(2 * bookmarkFrequency))
	c.sendDueBookmarks()
	if ev := nextEvent(t, w); ev.Type != watch.Bookmark || eventRV(t, ev) != rv {
		t.Fatalf("got %s at %d, want a BOOKMARK at %d", ev.Type, eventRV(t, ev), rv)
	}

	// The next one is due 2 s before the deadline, not a minute later.
	if got, want := nextBookmark(), deadline-bookmarkBeforeDeadline; got != want {
		t.Fatalf("next bookmark at %s, want %s (2 s before the deadline)", got, want)
	}
	rv = createLabeledPod(t, s, "db2", map[string]string{"app": "db"})
	if err := c.waitUntilFresh(context.Background(), rv, wait.ForeverTestTimeout); err != nil {
		t.Fatal(err)
	}
	fake.SetTime(start.Add(deadline - time.Second))
	c.sendDueBookmarks()
	if ev := nextEvent(t, w); ev.Type != watch.Bookmark || eventRV(t, ev) != rv {
		t.Fatalf("got %s at %d, want the pre-deadline BOOKMARK at %d", ev.Type, eventRV(t, ev), rv)
	}
	if got := nextBookmark(); got != -1 {
		t.Errorf("another bookmark scheduled at %s after the pre-deadline one", got)
	}
}

func TestBookmarksOnlyWhenAllowed(t *testing.T) {
	s, _ := newEtcdStore(t)
	c, fake := newFakeClockCache(t, s)
	w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(c.ResourceVersion()), Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	first := createPod(t, s, "a")
	if err := c.waitUntilFresh(context.Background(), first, wait.ForeverTestTimeout); err != nil {
		t.Fatal(err)
	}
	fake.Step(bookmarkFrequency)
	c.sendDueBookmarks()
	second := createPod(t, s, "b")
	for _, want := range []uint64{first, second} {
		if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != want {
			t.Fatalf("got %s at %d, want ADDED at %d: no bookmarks without allowWatchBookmarks", ev.Type, eventRV(t, ev), want)
		}
	}
}
