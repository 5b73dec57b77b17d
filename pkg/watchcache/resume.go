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
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// A cache's history starts where the cache listed: after a restart, or on
// an instance that started later, a client's resourceVersion can be older.
// Upstream's cache answers 410 and the client relists everything. With
// Config.ResumeFromStorage the cache serves such a watch from etcd's own
// history, as the etcd path does: the client gets the events it missed,
// or 410 once etcd has compacted them. Starting the cache costs nothing
// more: no history is replayed.
//
// Such a watch (resumedWatch) is a watch like the others:
//   - its memory is bounded: it holds at most resumedBufferSize events for
//     its client. A client that falls that far behind lets go of etcd's
//     watch (whose client buffers without bound what it is not read), and
//     a new one is opened from the last event once the client has read.
//   - it gets bookmarks: etcd's progress notifications, passed on at most
//     once per resumedBookmarkInterval, and a final one on Shutdown.
//   - it joins the cache's stream as soon as the cache's history reaches
//     back to its position: from then on a cache watcher serves it.
//
// While etcd replays a backlog, it shares the cache's gRPC stream and holds
// back the cache's progress requests (etcd answers them once every watch
// on the stream has caught up): a consistent read may wait that long.

// maxResumedRevisions is how far behind the cache a watch may be resumed
// from the storage; one further behind gets upstream's 410 and relists.
// etcd sends a watch that catches up 1,000 revisions at a time, and reads
// every revision from the watch's position to its own current one for each
// such batch: the memory that takes grows with the gap, and its time with
// the gap's square, whatever the watch's own buffer.
var maxResumedRevisions uint64 = 10_000

// resumedBufferSize is how many events a resumed watch holds for its
// client; a variable so that tests can force a slow client.
var resumedBufferSize = 256

// resumedBookmarkInterval is the least time between the bookmarks a
// resumed watch passes on (etcd notifies progress every few seconds).
const resumedBookmarkInterval = time.Minute

// resumedWatch is a watch from a resourceVersion older than the cache's
// history, served from the storage until it joins the cache's stream.
type resumedWatch struct {
	cache       *Cache
	ctx         context.Context
	key         string
	preparedKey string
	opts        storage.ListOptions
	result      chan watch.Event
	// done is closed by Stop (the client went away).
	done     chan struct{}
	stopOnce sync.Once
	// ended is closed by end (Shutdown); final says whether to send a
	// final bookmark first.
	ended   chan struct{}
	endOnce sync.Once
	final   bool
}

// resume serves a watch from the storage's history, after opts.ResourceVersion.
func (c *Cache) resume(ctx context.Context, key, preparedKey string, opts storage.ListOptions, from uint64) (watch.Interface, error) {
	r := &resumedWatch{
		cache: c, ctx: ctx, key: key, preparedKey: preparedKey, opts: opts,
		result: make(chan watch.Event, resumedBufferSize),
		done:   make(chan struct{}),
		ended:  make(chan struct{}),
	}
	c.mu.Lock()
	if !c.resumed.Add(r) {
		c.mu.Unlock()
		return nil, ErrShuttingDown
	}
	c.running.Add(1) // under c.mu, so never after Run has begun to join
	c.mu.Unlock()
	c.recordResumedFromStorage()
	go func() {
		defer c.running.Done()
		defer utilruntime.HandleCrash()
		defer c.resumed.Forget(r)
		stop := context.AfterFunc(ctx, r.Stop)
		defer stop()
		r.run(from)
	}()
	return r, nil
}

func (r *resumedWatch) ResultChan() <-chan watch.Event { return r.result }

func (r *resumedWatch) Stop() { r.stopOnce.Do(func() { close(r.done) }) }

func (r *resumedWatch) end(final bool) {
	r.endOnce.Do(func() {
		r.final = final
		close(r.ended)
	})
}

// run follows the storage from resourceVersion last until the watch
// joins the cache's stream or ends, then closes the result channel.
func (r *resumedWatch) run(last uint64) {
	defer close(r.result)
	for {
		if w := r.cache.join(r.ctx, r.preparedKey, r.opts, last); w != nil {
			r.forward(w)
			return
		}
		opts := r.opts
		opts.ResourceVersion = strconv.FormatUint(last, 10)
		opts.ProgressNotify = true // a progress notification moves last on, to where the cache can take over
		w, err := r.cache.cfg.Storage.Watch(r.ctx, r.key, opts)
		if err != nil {
			r.send(errorEvent(err), true)
			return
		}
		var more bool
		last, more = r.follow(w, last)
		w.Stop()
		if !more {
			return
		}
	}
}

// follow passes w's events on until the client falls a whole buffer
// behind, or the cache's history reaches back to the position (more: a
// new watch goes on from last), or the watch ends.
func (r *resumedWatch) follow(w watch.Interface, last uint64) (_ uint64, more bool) {
	var lastBookmark time.Time
	for {
		select {
		case <-r.done:
			return last, false
		case <-r.ended:
			if r.final {
				r.send(watch.Event{Type: watch.Bookmark, Object: r.bookmarkObject(last)}, false)
			}
			return last, false
		case ev, ok := <-w.ResultChan():
			if !ok {
				return last, false
			}
			if ev.Type == watch.Error {
				r.send(ev, true)
				return last, false
			}
			rv, err := r.cache.cfg.Versioner.ObjectResourceVersion(ev.Object)
			if err != nil {
				r.send(errorEvent(err), true)
				return last, false
			}
			if ev.Type == watch.Bookmark {
				// A progress notification: every event up to rv is passed on.
				if now := r.cache.cfg.Clock.Now(); r.opts.Predicate.AllowWatchBookmarks && now.Sub(lastBookmark) >= resumedBookmarkInterval && r.offer(ev) {
					lastBookmark = now
				}
			} else if !r.offer(ev) {
				w.Stop() // its buffers would grow while the client reads these
				return rv, r.send(ev, true)
			}
			last = rv
			if r.cache.covers(last) {
				return last, true
			}
		}
	}
}

// offer passes ev on if the client's buffer has room.
func (r *resumedWatch) offer(ev watch.Event) bool {
	select {
	case r.result <- ev:
		return true
	default:
		return false
	}
}

// send passes ev on once the client has room, unless the client goes
// away first or, with stopOnEnd, the watch is ended.
func (r *resumedWatch) send(ev watch.Event, stopOnEnd bool) bool {
	ended := r.ended
	if !stopOnEnd {
		ended = nil
	}
	select {
	case r.result <- ev:
		return true
	case <-r.done:
		return false
	case <-ended:
		return false
	}
}

// forward passes on the events of w, the cache watcher the watch joined.
func (r *resumedWatch) forward(w *watcher) {
	for {
		select {
		case <-r.done:
			w.Stop()
			return
		case ev, ok := <-w.ResultChan():
			if !ok || !r.send(ev, false) {
				w.Stop()
				return
			}
		}
	}
}

func (r *resumedWatch) bookmarkObject(rv uint64) runtime.Object {
	obj := r.cache.cfg.NewFunc()
	_ = r.cache.cfg.Versioner.UpdateObject(obj, rv) // fails only for objects without metadata
	return obj
}

// covers reports whether a watch from rv can be served by the cache: its
// history reaches back to rv, and it has seen rv.
func (c *Cache) covers(rv uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready && rv <= c.rv && rv >= c.history.startRV
}

// join returns a running cache watcher of preparedKey from rv, or nil if
// the cache does not cover rv (any more).
func (c *Cache) join(ctx context.Context, preparedKey string, opts storage.ListOptions, rv uint64) *watcher {
	if !c.covers(rv) {
		return nil
	}
	w, err := c.register(preparedKey, opts, watchRequest{from: rv}, deadline(ctx))
	if err != nil {
		return nil // too old now, or shutting down: the storage serves it, or Shutdown ends it
	}
	c.serve(ctx, w)
	return w
}

// errorEvent is the ERROR event that ends a watch with err's status.
func errorEvent(err error) watch.Event {
	status := apierrors.NewInternalError(err).Status()
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s.Status()
	}
	return watch.Event{Type: watch.Error, Object: &status}
}
