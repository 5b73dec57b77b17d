package watchcache

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
)

// newReplayingCache is a ready pod cache over s whose history is replayed
// from etcd's compaction revision, or starts at its list when replay is false.
func newReplayingCache(t *testing.T, s storage.Interface, replay bool) *Cache {
	t.Helper()
	cfg := podCacheConfig(s)
	cfg.ProgressNotify = true
	cfg.ReplayHistory = replay
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, "the cache to be ready", c.Ready)
	return c
}

// TestReplayedHistoryReachesBackToTheCompaction: a cache that started after
// some writes serves watches from before its start, as long as etcd has not
// compacted them; without replay it answers 410, as upstream's.
func TestReplayedHistoryReachesBackToTheCompaction(t *testing.T) {
	s, raw := newEtcdStore(t)
	first := createPod(t, s, "a")
	second := createPod(t, s, "b")
	// etcd moves on while pods stay idle: the cache is ready only once its
	// replay has reached this revision (a progress notification gets it there).
	resp, err := raw.Put(context.Background(), "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	current := uint64(resp.Header.Revision)

	for _, replay := range []bool{true, false} {
		t.Run(fmt.Sprintf("ReplayHistory=%t", replay), func(t *testing.T) {
			c := newReplayingCache(t, s, replay)
			if rv := c.ResourceVersion(); rv < current {
				t.Fatalf("ready at %d, before etcd's revision %d when it started", rv, current)
			}
			w := watchAllFrom(t, c, first)
			ev := nextEvent(t, w)
			if !replay {
				if ev.Type != watch.Error || apierrors.FromObject(ev.Object).(apierrors.APIStatus).Status().Code != http.StatusGone {
					t.Fatalf("got %s %v, want an ERROR event with 410", ev.Type, ev.Object)
				}
				return
			}
			if ev.Type != watch.Added || eventRV(t, ev) != second {
				t.Fatalf("got %s at %d, want the ADDED event of b at %d", ev.Type, eventRV(t, ev), second)
			}
		})
	}

	t.Run("after a compaction", func(t *testing.T) {
		if _, _, _, err := etcd3.Compact(context.Background(), raw, 0, int64(second)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the store to see the compaction", func() bool { return s.CompactRevision() == int64(second) })
		c := newReplayingCache(t, s, true)
		ev := nextEvent(t, watchAllFrom(t, c, first))
		if ev.Type != watch.Error || apierrors.FromObject(ev.Object).(apierrors.APIStatus).Status().Code != http.StatusGone {
			t.Fatalf("watch from before the compaction: got %s %v, want an ERROR event with 410", ev.Type, ev.Object)
		}
		// From the compaction revision on, the history is there.
		w := watchAllFrom(t, c, second)
		third := createPod(t, s, "c")
		if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != third {
			t.Fatalf("watch from the compaction revision: got %s at %d, want ADDED at %d", ev.Type, eventRV(t, ev), third)
		}
	})
}

// TestWatchListAtAnIdleResourcesFutureRevision: a watch-list at an RV the
// cache has not seen because its resource is idle (another resource's
// write, or another instance's RV) catches up by progress request, as a
// consistent read does, instead of timing out with 504 after 3 s.
func TestWatchListAtAnIdleResourcesFutureRevision(t *testing.T) {
	s, raw := newEtcdStore(t)
	createPod(t, s, "a")
	c := newConformanceCacheOn(t, s)
	resp, err := raw.Put(context.Background(), "/elsewhere", "x")
	if err != nil {
		t.Fatal(err)
	}
	rv := uint64(resp.Header.Revision)
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	sendInitialEvents := true
	w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{
		ResourceVersion: fmt.Sprint(rv), SendInitialEvents: &sendInitialEvents, Recursive: true, Predicate: pred,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	if ev := nextEvent(t, w); ev.Type != watch.Added {
		t.Fatalf("got %s %v, want the ADDED event of a first", ev.Type, ev.Object)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Bookmark || eventRV(t, ev) < rv {
		t.Fatalf("got %s at %d, want the initial-events-end BOOKMARK at %d or later", ev.Type, eventRV(t, ev), rv)
	}
}
