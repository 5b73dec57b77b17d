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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// resultBufferSize is how many converted events a watcher holds for its
// client; they are still delivered after Stop (upstream's out buffer).
const resultBufferSize = 10

// Bookmark timing, as upstream: a watcher that allows bookmarks gets one
// about every bookmarkFrequency, and one bookmarkBeforeDeadline before its
// request times out.
const (
	bookmarkFrequency      = time.Minute
	bookmarkBeforeDeadline = 2 * time.Second
)

// watcher is one client's watch. It first sends its initial state (a
// snapshot, as ADDED events, then the initial-events-end bookmark when asked
// for), then its backlog (history events after its start), then the events
// offered to its bounded input buffer (never blocking the dispatcher),
// filtered by the client's selector and converted to what that client sees.
type watcher struct {
	// initial, when set, is the state sent first, at resourceVersion initialRV.
	initial   *store
	initialRV uint64
	prefix    string // the key prefix of the watch, to walk initial with
	// initialized is called once the initial state and backlog are sent
	// (API Priority and Fairness counts the watch's cost until then).
	initialized func()
	// countInitEvents is told how many initial events were sent.
	countInitEvents func(int)
	// endBookmark: after initial, send a bookmark annotated
	// k8s.io/initial-events-end (watch-list, KEP-3157).
	endBookmark bool
	// backlog is the history the watch starts with.
	backlog []*event

	input  chan *event
	result chan watch.Event
	done   chan struct{}
	once   sync.Once

	// lagging: its input was full when dispatch had an event for it, so
	// dispatch offers it nothing more; run delivers what input holds, then
	// replays the events after resumeAfter from the history (replay), and
	// rejoins dispatch once it has them all. Both are guarded by the
	// cache's lock. lag tells run that lagging began.
	lagging     bool
	resumeAfter uint64
	lag         chan struct{}
	replay      func() (events []*event, ok bool)

	// matches reports whether an object belongs to this watch (namespace, name, selectors).
	matches func(*element) bool
	// scope is the watcherSet bucket the cache finds it in.
	scope watchScope
	// sinceRV: only events after it are delivered, so a watcher never goes
	// back in time. Owned by run.
	sinceRV   uint64
	startRV   uint64 // where the watch started
	versioner storage.Versioner
	newFunc   func() runtime.Object
	// events writes initial events from kept encodings (nil: none does).
	events EventWriter

	// allowBookmarks, deadline and nextBookmark schedule periodic bookmarks;
	// nextBookmark is guarded by the cache's lock (zero: none scheduled).
	allowBookmarks bool
	deadline       time.Time
	nextBookmark   time.Time
}

var _ watch.Interface = (*watcher)(nil)

func newWatcher(bufferSize int, sinceRV uint64, matches func(*element) bool, versioner storage.Versioner) *watcher {
	return &watcher{
		input:     make(chan *event, bufferSize),
		lag:       make(chan struct{}, 1),
		result:    make(chan watch.Event, resultBufferSize),
		done:      make(chan struct{}),
		matches:   matches,
		sinceRV:   sinceRV,
		startRV:   sinceRV,
		versioner: versioner,
	}
}

// concerns reports whether e can mean anything to w: a change whose
// object, before or after it, w's namespace, name and selectors match.
// Dispatch offers w nothing else, so that churn outside a watch (another
// namespace, another node's pods) never fills its buffer and gets it
// closed, as upstream's cacher dispatches by namespace and trigger index.
// convert decides what w sees of the rest.
func (w *watcher) concerns(e *event) bool {
	return e.typ == watch.Bookmark || w.matches(e.obj) || e.prevObj != nil && w.matches(e.prevObj)
}

// offer queues e without blocking; false means the buffer is full and the
// watcher has fallen behind.
func (w *watcher) offer(e *event) bool {
	e.shared.ref() // released by run once delivered
	select {
	case w.input <- e:
		return true
	case <-w.done:
		e.shared.release()
		return true // stopped: nothing to deliver, nothing to report
	default:
		e.shared.release()
		return false
	}
}

// scheduleBookmark sets when the next periodic bookmark is due after now:
// bookmarkFrequency from now, or just before the deadline if that comes
// first, or never once that moment has passed (upstream's nextBookmarkTime).
func (w *watcher) scheduleBookmark(now time.Time) {
	w.nextBookmark = time.Time{}
	if !w.allowBookmarks {
		return
	}
	next := now.Add(bookmarkFrequency)
	if !w.deadline.IsZero() {
		if preDeadline := w.deadline.Add(-bookmarkBeforeDeadline); preDeadline.Before(next) {
			next = preDeadline
		}
	}
	if !next.Before(now) {
		w.nextBookmark = next
	}
}

// ResultChan implements watch.Interface.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface; it is safe to call more than once.
func (w *watcher) Stop() {
	w.once.Do(func() { close(w.done) })
}

// run delivers the initial state, the backlog, then queued events, until
// the watcher is stopped; then it closes ResultChan.
func (w *watcher) run() {
	defer close(w.result)
	if w.initial != nil {
		if !w.sendInitial() {
			return
		}
	}
	for _, e := range w.backlog {
		if !w.deliver(e) {
			return
		}
	}
	w.backlog = nil
	if w.initialized != nil {
		w.initialized()
	}
	for {
		select {
		case <-w.done:
			return
		case e, ok := <-w.input:
			if !ok {
				return // ended (see end)
			}
			delivered := w.deliver(e)
			e.shared.release() // the reference dispatch took for this watcher
			if !delivered {
				return // stopped
			}
		case <-w.lag:
			if !w.drain() || !w.catchUp() {
				return
			}
		}
	}
}

// drain delivers what the watcher's input holds (what dispatch offered it
// before it fell behind); false once it is stopped, or ended while behind
// (its client resumes from its last event).
func (w *watcher) drain() bool {
	for {
		select {
		case e, ok := <-w.input:
			if !ok {
				return false
			}
			delivered := w.deliver(e)
			e.shared.release()
			if !delivered {
				return false
			}
		default:
			return true
		}
	}
}

// catchUp delivers the events dispatch did not offer, from the history, a
// chunk at a time, until replay has put the watcher back into dispatch;
// false once it is stopped or closed.
func (w *watcher) catchUp() bool {
	for {
		events, ok := w.replay()
		if !ok {
			return false
		}
		if len(events) == 0 {
			return true
		}
		for _, e := range events {
			if w.concerns(e) && !w.deliver(e) {
				return false
			}
		}
	}
}

// end makes the watcher finish gracefully, as at shutdown: it delivers the
// events it holds, then final (if any, and if its buffer has room), then
// closes its result channel. The caller has removed it from the cache's
// watchers under the cache's lock, so nothing is offered to it any more.
func (w *watcher) end(final *event) {
	if final != nil {
		select {
		case w.input <- final:
		default: // a watcher a whole buffer behind resumes from its last event
		}
	}
	close(w.input)
}

// sendInitial streams the snapshot's matching objects as ADDED events, then
// the end bookmark if asked for.
//
// Each object goes out as a keptObject, not a cachingObject: a
// cachingObject would keep each whole event's encoding for as long as it
// lives; a keptObject is written from the object's kept encoding (shared
// with LISTs) by the server's EventWriter, with no per-watcher copy.
func (w *watcher) sendInitial() bool {
	ok, sent := true, 0
	w.initial.ascend(w.prefix, "", func(e *element) bool {
		if w.matches(e) {
			ok = w.send(watch.Event{Type: watch.Added, Object: newKeptObject(e, w.events)})
			sent++
		}
		return ok
	})
	w.initial = nil // let the snapshot go
	if w.countInitEvents != nil {
		w.countInitEvents(sent)
	}
	if !ok {
		return false
	}
	w.sinceRV, w.startRV = w.initialRV, w.initialRV
	if w.endBookmark {
		return w.send(watch.Event{Type: watch.Bookmark, Object: w.bookmarkObject(w.initialRV, true)})
	}
	return true
}

func (w *watcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

// deliver sends what e means to this watcher; false once the watcher is stopped.
func (w *watcher) deliver(e *event) bool {
	// A bookmark may repeat the resourceVersion of the last event sent, as
	// upstream's do, but only once the cache has moved past the start; the
	// final one is sent whatever it repeats.
	if e.rv < w.sinceRV || e.rv == w.sinceRV && (e.typ != watch.Bookmark || e.rv == w.startRV && !e.final) {
		return true
	}
	out, ok := w.convert(e)
	if !ok {
		return true
	}
	if !w.send(out) {
		return false
	}
	w.sinceRV = e.rv
	return true
}

// convert turns a cache event into what this watcher sees, as upstream's
// cacheWatcher does: an update that moves an object into the watcher's
// selection is ADDED, one that moves it out is DELETED (carrying the old
// object at the new resourceVersion), and changes outside it are dropped.
func (w *watcher) convert(e *event) (watch.Event, bool) {
	if e.typ == watch.Bookmark {
		if !w.allowBookmarks {
			return watch.Event{}, false
		}
		return watch.Event{Type: watch.Bookmark, Object: w.bookmarkObject(e.rv, false)}, true
	}
	cur := e.typ != watch.Deleted && w.matches(e.obj)
	prev := e.prevObj != nil && w.matches(e.prevObj)
	switch {
	case e.typ == watch.Deleted:
		if !w.matches(e.obj) {
			return watch.Event{}, false
		}
		return watch.Event{Type: watch.Deleted, Object: e.cachedObject()}, true
	case cur && prev:
		return watch.Event{Type: watch.Modified, Object: e.cachedObject()}, true
	case cur:
		return watch.Event{Type: watch.Added, Object: e.cachedObject()}, true
	case prev:
		return watch.Event{Type: watch.Deleted, Object: e.prevAtRVObject(w.versioner)}, true
	default:
		return watch.Event{}, false
	}
}

// bookmarkObject is an empty object of the watched kind carrying only rv
// (and, for the end of a watch-list's initial events, the annotation).
func (w *watcher) bookmarkObject(rv uint64, initialEventsEnd bool) runtime.Object {
	obj := w.newFunc()
	_ = w.versioner.UpdateObject(obj, rv) // fails only for objects without metadata
	if initialEventsEnd {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
	}
	return obj
}

// cachedObject is e's object as every watcher receives it.
func (e *event) cachedObject() runtime.Object {
	return e.shared.object(e.obj.object)
}

// prevAtRVObject is a copy of e's previous object at e's resourceVersion,
// shared by every watcher that receives it.
func (e *event) prevAtRVObject(versioner storage.Versioner) runtime.Object {
	e.prevAtRVOnce.Do(func() {
		obj := e.prevObj.object.DeepCopyObject()
		_ = versioner.UpdateObject(obj, e.rv) // fails only for objects without metadata; cached ones have it
		e.prevAtRV = newCachingObject(obj)
	})
	return e.prevAtRV
}
