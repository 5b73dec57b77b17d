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
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestShutdownEndsWatchesAfterAFinalBookmark: Shutdown ends every watch at
// once; with ShutdownBookmarks, one that allows bookmarks first gets a
// BOOKMARK at etcd's current revision, even though its resource was idle
// since. New watches get 429 afterwards.
func TestShutdownEndsWatchesAfterAFinalBookmark(t *testing.T) {
	for _, bookmarks := range []bool{true, false} {
		t.Run(fmt.Sprintf("ShutdownBookmarks=%t", bookmarks), func(t *testing.T) {
			s, raw := newEtcdStore(t)
			createPod(t, s, "a")
			c := newShutdownCache(t, s, bookmarks, nil)
			waitFor(t, "the cache to be ready", c.Ready)
			open := func(allowBookmarks bool) watch.Interface {
				pred := storage.Everything
				pred.AllowWatchBookmarks = allowBookmarks
				w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(c.ResourceVersion()), Recursive: true, Predicate: pred})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(w.Stop)
				return w
			}
			withBookmarks, without := open(true), open(false)
			// Another resource moves etcd's revision; this one stays idle.
			resp, err := raw.Put(context.Background(), "/elsewhere", "x")
			if err != nil {
				t.Fatal(err)
			}
			current := uint64(resp.Header.Revision)

			start := time.Now()
			c.Shutdown(context.Background())
			if bookmarks {
				ev := nextEvent(t, withBookmarks)
				if ev.Type != watch.Bookmark || eventRV(t, ev) != current {
					t.Fatalf("got %s at %d, want a BOOKMARK at etcd's revision %d", ev.Type, eventRV(t, ev), current)
				}
			}
			expectClosed(t, withBookmarks)
			expectClosed(t, without)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("watches took %s to end, want well under the 1 s progress bound plus delivery", took)
			}

			_, err = c.Watch(context.Background(), "/pods/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
			if !apierrors.IsTooManyRequests(err) {
				t.Errorf("watch after Shutdown: got %v, want 429", err)
			}
		})
	}
}

// newShutdownCache is a running cache of pods over s that asks for progress
// notifications, with or without shutdown bookmarks, on clk (nil: the
// real clock).
func newShutdownCache(t *testing.T, s storage.Interface, bookmarks bool, clk clock.WithTicker) *Cache {
	t.Helper()
	c, err := New(Config{
		Storage:           s,
		ResourcePrefix:    "/pods/",
		NewListFunc:       func() runtime.Object { return &example.PodList{} },
		KeyFunc:           func(obj runtime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) },
		GetAttrsFunc:      storage.DefaultNamespaceScopedAttr,
		ProgressNotify:    true,
		ShutdownBookmarks: bookmarks,
		Clock:             clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	return c
}

// expectClosed fails unless w's result channel closes without another event.
func expectClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("got a %s event, want the watch to end", ev.Type)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the watch did not end")
	}
}

// revisionCountingStorage counts the reads of etcd's current revision, which a
// cache makes to catch up before its final bookmarks.
type revisionCountingStorage struct {
	storage.Interface
	currentRVReads atomic.Int32
}

func (s *revisionCountingStorage) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	s.currentRVReads.Add(1)
	return s.Interface.GetCurrentResourceVersion(ctx)
}

// TestShutdownWithoutBookmarkWatchersDoesNotWait: a cache none of whose
// watchers allows bookmarks has no final bookmark to send, so its Shutdown
// does not ask etcd where it is (a server has one cache per resource, most
// of them unwatched, and stops with all of them).
func TestShutdownWithoutBookmarkWatchersDoesNotWait(t *testing.T) {
	for _, allowBookmarks := range []bool{false, true} {
		t.Run(fmt.Sprintf("allowBookmarks=%t", allowBookmarks), func(t *testing.T) {
			etcd, _ := newEtcdStore(t)
			s := &revisionCountingStorage{Interface: etcd}
			c := newShutdownCache(t, s, true, nil)
			waitFor(t, "the cache to be ready", c.Ready)
			pred := storage.Everything
			pred.AllowWatchBookmarks = allowBookmarks
			w, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(c.ResourceVersion()), Recursive: true, Predicate: pred})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			before := s.currentRVReads.Load()
			c.Shutdown(context.Background())
			if got, want := s.currentRVReads.Load()-before > 0, allowBookmarks; got != want {
				t.Errorf("Shutdown read etcd's current revision: %t, want %t", got, want)
			}
			if allowBookmarks {
				if ev := nextEvent(t, w); ev.Type != watch.Bookmark {
					t.Errorf("got %s, want the final BOOKMARK", ev.Type)
				}
			}
			expectClosed(t, w)
		})
	}
}

// unreachableStorage says etcd is far ahead of anything the cache will see,
// and reports each progress request on requested.
type unreachableStorage struct {
	storage.Interface
	requested chan struct{}
}

func (s *unreachableStorage) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	rv, err := s.Interface.GetCurrentResourceVersion(ctx)
	return rv + 1000, err
}

func (s *unreachableStorage) RequestWatchProgress(context.Context) error {
	select {
	case s.requested <- struct{}{}:
	default:
	}
	return nil
}

// TestShutdownStopsWaitingOnceNoWatcherIsLeftForABookmark: Shutdown waits
// to catch up only for the watchers that would get a final bookmark; once
// the last of them has stopped (the server's own informers stop just
// before it), it ends the watches at once instead of waiting out its bound.
func TestShutdownStopsWaitingOnceNoWatcherIsLeftForABookmark(t *testing.T) {
	etcd, _ := newEtcdStore(t)
	s := &unreachableStorage{Interface: etcd, requested: make(chan struct{}, 1)}
	// A fake clock holds the 3 s bound on a catch-up, and an hour the one on
	// Shutdown's: only the watchers' stop can end the wait.
	c := newShutdownCache(t, s, true, clocktesting.NewFakeClock(time.Now()))
	c.shutdownProgressTimeout = time.Hour
	waitFor(t, "the cache to be ready", c.Ready)
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	watches := make([]watch.Interface, 2)
	for i := range watches {
		var err error
		if watches[i], err = c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(c.ResourceVersion()), Recursive: true, Predicate: pred}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(watches[i].Stop)
	}
	watches[0].Stop() // before Shutdown: not waited for
	<-watches[0].ResultChan()

	shutDown := make(chan struct{})
	go func() {
		c.Shutdown(context.Background())
		close(shutDown)
	}()
	select {
	case <-s.requested: // Shutdown waits for progress
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Shutdown asked etcd for no progress: it had a watcher to wait for")
	}
	watches[1].Stop()
	select {
	case <-shutDown:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("Shutdown still waits for progress after every watcher that allows bookmarks stopped")
	}
}
