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
	"strconv"
	"sync"
	"sync/atomic"
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

// TestWatchTooFarBehindIsNotResumed: a watch more than maxResumedRevisions
// behind the cache gets upstream's 410 instead of a replay from etcd; one
// within it is resumed.
func TestWatchTooFarBehindIsNotResumed(t *testing.T) {
	defer func(n uint64) { maxResumedRevisions = n }(maxResumedRevisions)
	maxResumedRevisions = 3
	s, _ := newEtcdStore(t)
	first := createPod(t, s, "a")
	var last uint64
	for _, name := range []string{"b", "c", "d"} {
		last = createPod(t, s, name)
	}
	c := newResumingCache(t, s, true)
	ev := nextEvent(t, watchAllFrom(t, c, first-1)) // 4 revisions behind
	if ev.Type != watch.Error || apierrors.FromObject(ev.Object).(apierrors.APIStatus).Status().Code != http.StatusGone {
		t.Fatalf("4 revisions behind: got %s %v, want an ERROR event with 410", ev.Type, ev.Object)
	}
	if ev := nextEvent(t, watchAllFrom(t, c, first)); ev.Type != watch.Added || eventRV(t, ev) <= first || eventRV(t, ev) > last {
		t.Fatalf("3 revisions behind: got %s at %d, want an ADDED event after %d", ev.Type, eventRV(t, ev), first)
	}
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

// watchCountingStorage counts the watches opened on the storage from a
// resourceVersion below below (not the cache's own, which starts where it
// listed), and those still open.
type watchCountingStorage struct {
	storage.Interface
	below        uint64
	opened, open atomic.Int64
}

func (s *watchCountingStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	if rv, err := strconv.ParseUint(opts.ResourceVersion, 10, 64); err != nil || rv >= s.below {
		return w, nil
	}
	s.opened.Add(1)
	s.open.Add(1)
	return &countedWatch{Interface: w, open: &s.open}, nil
}

type countedWatch struct {
	watch.Interface
	open *atomic.Int64
	once sync.Once
}

func (w *countedWatch) Stop() {
	w.once.Do(func() {
		w.open.Add(-1)
		w.Interface.Stop()
	})
}

// TestStalledResumedWatchLetsGoOfTheStorage: a watch resumed from etcd's
// history whose client stops reading holds no more than its buffer: it
// stops etcd's watch (whose client would buffer the whole backlog) and
// opens a new one from its last event once the client reads again. The
// client gets every event once, in order, then live ones from the cache.
func TestStalledResumedWatchLetsGoOfTheStorage(t *testing.T) {
	defer func(n int) { resumedBufferSize = n }(resumedBufferSize)
	resumedBufferSize = 8
	s, _ := newEtcdStore(t)
	first := createPod(t, s, "p0000")
	const backlog = 100
	var want []uint64
	for i := range backlog {
		want = append(want, createPod(t, s, fmt.Sprintf("p%04d", i+1)))
	}
	counting := &watchCountingStorage{Interface: s, below: want[len(want)-1]}
	c := newResumingCache(t, counting, true)

	w := watchAllFrom(t, c, first)
	// The client reads a buffer's worth at a time, each time only once the
	// watch has stalled: its buffer full and one more event waiting, it has
	// stopped its storage watch (the nth since the start).
	var got []uint64
	for n := int64(1); len(got) < backlog; n++ {
		if backlog-len(got) > resumedBufferSize {
			waitFor(t, fmt.Sprintf("the stalled watch to stop its storage watch %d", n), func() bool {
				return counting.opened.Load() >= n && counting.open.Load() == 0
			})
		}
		for range min(resumedBufferSize, backlog-len(got)) {
			ev := nextEvent(t, w)
			if ev.Type != watch.Added {
				t.Fatalf("got a %s event, want ADDED", ev.Type)
			}
			got = append(got, eventRV(t, ev))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got events at %v, want at %v", got, want)
	}
	live := createPod(t, s, "live")
	if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != live {
		t.Fatalf("got %s at %d, want the live ADDED at %d", ev.Type, eventRV(t, ev), live)
	}
	waitFor(t, "the watch to join the cache's stream", func() bool { return counting.open.Load() == 0 })
}

// TestResumedWatchGetsTheFinalBookmark: a watch resumed from etcd's
// history that allows bookmarks joins the cache's stream once it has caught
// up, and so gets the final bookmark on Shutdown, as the cache's own
// watchers do (a watch left on etcd's would end with none).
func TestResumedWatchGetsTheFinalBookmark(t *testing.T) {
	s, _ := newEtcdStore(t)
	first := createPod(t, s, "a")
	second := createPod(t, s, "b")
	cfg := podCacheConfig(s)
	cfg.ProgressNotify, cfg.ResumeFromStorage, cfg.ShutdownBookmarks = true, true, true
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, "the cache to be ready", c.Ready)
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(first), Recursive: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := nextEvent(t, w); ev.Type != watch.Added || eventRV(t, ev) != second {
		t.Fatalf("got %s at %d, want the ADDED event of b at %d", ev.Type, eventRV(t, ev), second)
	}
	c.Shutdown(context.Background())
	if ev := nextEvent(t, w); ev.Type != watch.Bookmark || eventRV(t, ev) < second {
		t.Fatalf("got %s at %d, want a final BOOKMARK at %d or later", ev.Type, eventRV(t, ev), second)
	}
	expectClosed(t, w)
}
