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
	"errors"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// defaultWatchBufferSize is Config.WatchBufferSize's default: how many
// events dispatch queues for a watcher; one that falls further behind
// catches up from the history instead (upstream sizes it to about a second
// of events, 10 to 1000, and closes the watcher).
const defaultWatchBufferSize = 100

// replayChunk is how many history events a lagging watcher takes at a time
// (each take holds the cache's lock briefly).
const replayChunk = 256

// Watch serves watches from the cache, as upstream's cacher does:
//
//   - sendInitialEvents=true (watch-list): the current state as ADDED events,
//     then (with allowWatchBookmarks) a bookmark annotated
//     k8s.io/initial-events-end, then changes. With resourceVersion "" the
//     state is at least etcd's revision at the time of the request (a
//     consistent read); with N at least N. If the cache does not get there
//     in time the watch gets one ERROR event, 504 "Too large resource version".
//   - sendInitialEvents unset and resourceVersion "" or "0": the current state
//     as ADDED events, then changes.
//   - resourceVersion N: the changes after N; when N is older than the
//     history, from the storage's own history with Config.ResumeFromStorage
//     if N is at most maxResumedRevisions behind (etcd answers 410 once it
//     has compacted N), else one ERROR event, 410 Expired "too old resource
//     version", as upstream.
//   - sendInitialEvents=false: changes after N, after the cache's current
//     resourceVersion ("0"), or after etcd's current revision ("").
//
// Until the cache is ready, a watch waits for it (up to 3 s, then 429 with
// Retry-After, as upstream answers at once); once Shutdown has ended its
// watchers, watches get 429 too. None goes to etcd: a watch there would
// share the cache's gRPC stream, and etcd answers a progress request only
// once every watch on the stream has caught up, so a watch catching up
// there would delay the cache's progress requests, which consistent reads
// wait on, until etcd's periodic notification.
func (c *Cache) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	preparedKey, err := storage.PrepareKey(c.cfg.ResourcePrefix, key, opts.Recursive)
	if err != nil {
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	req := watchRequest{from: rv}
	switch sendInitial := opts.SendInitialEvents; {
	case sendInitial != nil && *sendInitial:
		req.initial = true
		req.endBookmark = opts.Predicate.AllowWatchBookmarks
		switch opts.ResourceVersion {
		case "":
			err = c.waitUntilConsistent(ctx)
		case "0":
		default:
			err = c.waitWithProgress(ctx, rv) // an idle resource catches up by progress request
		}
		if err != nil {
			return watchFailure(err)
		}
	case sendInitial == nil && (opts.ResourceVersion == "" || opts.ResourceVersion == "0"):
		req.initial = true
	case opts.ResourceVersion == "":
		if req.from, err = c.cfg.Storage.GetCurrentResourceVersion(ctx); err != nil {
			return watchFailure(err)
		}
	}
	w, err := c.register(preparedKey, opts, req, deadline(ctx))
	if err == ErrShuttingDown {
		return nil, err // an HTTP 429, before the stream starts
	}
	if errors.As(err, new(tooOldError)) && c.cfg.ResumeFromStorage && c.ResourceVersion()-req.from <= maxResumedRevisions {
		return c.resume(ctx, key, preparedKey, opts, req.from)
	}
	if err != nil {
		return watchFailure(err)
	}
	if c.cfg.WatchInitialized != nil {
		w.initialized = func() { c.cfg.WatchInitialized(ctx) }
	}
	c.serve(ctx, w)
	return w, nil
}

// serve runs w, which register returned, until it is stopped, ended, or
// ctx ends.
func (c *Cache) serve(ctx context.Context, w *watcher) {
	go func() { // counted in c.running by register; Run joins it
		defer c.running.Done()
		defer utilruntime.HandleCrash()
		defer c.unregister(w)
		stop := context.AfterFunc(ctx, w.Stop) // the client went away
		defer stop()
		w.run()
	}()
}

// ErrShuttingDown answers watches once shutdown has begun (the cache's
// Shutdown, or a tracker's in Watches): 429 makes client-go retry the watch
// (from its last resourceVersion, on whichever server answers) rather than
// relist.
var ErrShuttingDown = apierrors.NewTooManyRequests("the server is shutting down", 1)

// watchRequest is where a watch starts: after resourceVersion from (0: the
// cache's current one), or with the cache's current state (initial).
type watchRequest struct {
	from        uint64
	initial     bool
	endBookmark bool
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// watchFailure answers a watch the cache cannot serve as upstream does once
// the request is valid: a 200 stream with one ERROR event carrying the
// status, an internal error's (500) for an error without one, such as
// etcd's or the request's deadline passing before the watch started.
func watchFailure(err error) (watch.Interface, error) {
	var tooOld tooOldError
	if errors.As(err, &tooOld) {
		return newErrWatcher(apierrors.NewResourceExpired(tooOld.Error())), nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Message: err.Error(), Reason: metav1.StatusReasonInternalError, Code: http.StatusInternalServerError,
		}}
	}
	return newErrWatcher(status), nil
}

// register creates a watcher for req, atomically with respect to events
// being applied, so that none is missed or delivered twice: its initial
// state is a snapshot of the store at the cache's resourceVersion, and its
// backlog the history after where it starts.
func (c *Cache) register(preparedKey string, opts storage.ListOptions, req watchRequest, deadline time.Time) (*watcher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shuttingDown {
		return nil, ErrShuttingDown
	}
	from := req.from
	if req.initial || from == 0 {
		from = c.rv
	}
	backlog, err := c.history.since(from)
	if err != nil {
		return nil, err
	}
	w := newWatcher(c.cfg.WatchBufferSize, from, matcher(preparedKey, opts.Recursive, opts.Predicate), c.cfg.Versioner)
	w.backlog = backlog
	w.prefix = preparedKey
	w.newFunc = c.cfg.NewFunc
	w.events = c.cfg.Encodings.eventWriter()
	w.allowBookmarks = opts.Predicate.AllowWatchBookmarks
	w.deadline = deadline
	if req.initial {
		w.initial, w.initialRV, w.endBookmark = c.store.clone(), c.rv, req.endBookmark
		w.countInitEvents = c.recordInitEvents
	}
	w.scheduleBookmark(c.cfg.Clock.Now())
	w.replay = func() ([]*event, bool) { return c.replay(w) }
	w.scope = c.watchers.scopeOf(preparedKey, opts.Predicate)
	c.watchers.add(w)
	c.running.Add(1) // under c.mu, so never after Run has begun to join
	return w, nil
}

func (c *Cache) unregister(w *watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers.remove(w)
}

// dispatchLocked offers e to every watcher it concerns but the lagging
// ones, found through the watchers' index (watcherSet). One that
// has fallen a whole buffer behind is not closed, as upstream 1.37 closes
// it, but marked lagging: it replays the rest from the history (replay),
// then rejoins, with no gap and no duplicate (KEP-6268's direction).
func (c *Cache) dispatchLocked(e *event) {
	c.watchers.candidates(e, func(w *watcher) {
		if w.lagging || !w.concerns(e) {
			return
		}
		if !w.offer(e) {
			w.lagging, w.resumeAfter = true, e.rv-1 // e, in the history, is the first it missed
			select {
			case w.lag <- struct{}{}:
			default:
			}
		}
	})
	e.shared.release() // dispatch's own reference (see sharedEncoding)
	c.recordEventDispatched()
}

// replay returns the next history events a lagging watcher missed. With
// none left it returns none and puts the watcher back into dispatch,
// atomically with the events being applied, which take the same lock. ok is false if
// the watcher is gone (stopped, or the cache relisted or shut down) or its
// position has left the history: then it is closed, as upstream closes a
// watcher that falls behind, and its client resumes from its last event.
func (c *Cache) replay(w *watcher) (events []*event, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.watchers.has(w) {
		return nil, false
	}
	events, err := c.history.after(w.resumeAfter, replayChunk)
	if err != nil {
		c.watchers.remove(w)
		w.Stop()
		c.recordTerminatedWatcher()
		return nil, false
	}
	if len(events) == 0 {
		w.lagging = false
		return nil, true
	}
	w.resumeAfter = events[len(events)-1].rv
	return events, true
}

// stopWatchersLocked closes every watcher, as after a relist.
func (c *Cache) stopWatchersLocked() {
	for w := range c.watchers.all {
		w.Stop()
		c.watchers.remove(w)
	}
}

// matcher selects the elements a watch of preparedKey with pred sees.
func matcher(preparedKey string, recursive bool, pred storage.SelectionPredicate) func(*element) bool {
	return func(e *element) bool {
		if recursive && !strings.HasPrefix(e.key, preparedKey) || !recursive && e.key != preparedKey {
			return false
		}
		// The cache computed e's labels and fields with the resource's own
		// attribute function when e entered it, as pred.GetAttrs would.
		return pred.Empty() || pred.MatchesObjectAttributes(e.labels, e.fields)
	}
}

// errWatcher delivers one ERROR event and closes, as upstream answers a
// watch it cannot serve once the response has started.
type errWatcher struct {
	result chan watch.Event
}

func newErrWatcher(err apierrors.APIStatus) *errWatcher {
	status := err.Status()
	w := &errWatcher{result: make(chan watch.Event, 1)}
	w.result <- watch.Event{Type: watch.Error, Object: &status}
	close(w.result)
	return w
}

func (w *errWatcher) ResultChan() <-chan watch.Event { return w.result }
func (w *errWatcher) Stop()                          {}
