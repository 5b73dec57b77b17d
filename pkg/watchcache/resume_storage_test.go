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

// newResumingCache is a ready pod cache over s that serves watches older
// than its history from the storage when resume is set.
func newResumingCache(t *testing.T, s storage.Interface, resume bool) *Cache {
	t.Helper()
	cfg := podCacheConfig(s)
	cfg.ProgressNotify = true
	cfg.ResumeFromStorage = resume
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, "the cache to be ready", c.Ready)
	return c
}

// TestOlderWatchesResumeFromTheStorage: a cache that started after some
// writes serves watches from before its start from etcd's history, as long
// as etcd has not compacted them; without ResumeFromStorage it answers 410,
// as upstream's.
func TestOlderWatchesResumeFromTheStorage(t *testing.T) {
	s, raw := newEtcdStore(t)
	first := createPod(t, s, "a")
	second := createPod(t, s, "b")

	for _, resume := range []bool{true, false} {
		t.Run(fmt.Sprintf("ResumeFromStorage=%t", resume), func(t *testing.T) {
			c := newResumingCache(t, s, resume)
			w := watchAllFrom(t, c, first)
			ev := nextEvent(t, w)
			if !resume {
				if ev.Type != watch.Error || apierrors.FromObject(ev.Object).(apierrors.APIStatus).Status().Code != http.StatusGone {
					t.Fatalf("got %s %v, want an ERROR event with 410", ev.Type, ev.Object)
				}
				return
			}
			if ev.Type != watch.Added || eventRV(t, ev) != second {
				t.Fatalf("got %s at %d, want the ADDED event of b at %d", ev.Type, eventRV(t, ev), second)
			}
			// Shutdown ends it too.
			c.Shutdown(context.Background())
			expectClosed(t, w)
		})
	}

	t.Run("after a compaction", func(t *testing.T) {
		third := createPod(t, s, "c")
		if _, _, _, err := etcd3.Compact(context.Background(), raw, 0, int64(third)); err != nil {
			t.Fatal(err)
		}
		c := newResumingCache(t, s, true)
		ev := nextEvent(t, watchAllFrom(t, c, first)) // its next event, b's, is compacted
		if ev.Type != watch.Error || apierrors.FromObject(ev.Object).(apierrors.APIStatus).Status().Code != http.StatusGone {
			t.Fatalf("watch from before the compaction: got %s %v, want an ERROR event with 410", ev.Type, ev.Object)
		}
		// From the compaction revision on, etcd has the history.
		w := watchAllFrom(t, c, third)
		fourth := createPod(t, s, "d")
		if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != fourth {
			t.Fatalf("watch from the compaction revision: got %s at %d, want ADDED at %d", ev.Type, eventRV(t, ev), fourth)
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
