package watchcache

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// watcher is one client's watch: events are offered to its bounded input
// buffer (never blocking the dispatcher), filtered by the client's selector,
// converted to what that client sees, and delivered on ResultChan.
type watcher struct {
	// backlog is delivered first: the history events the watch starts with.
	backlog []*event
	input   chan *event
	result  chan watch.Event
	done    chan struct{}
	once    sync.Once

	// matches reports whether an object belongs to this watch (namespace, name, selectors).
	matches func(*element) bool
	// sinceRV: only events after it are delivered, so a watcher never goes back in time.
	sinceRV   uint64
	versioner storage.Versioner
}

var _ watch.Interface = (*watcher)(nil)

func newWatcher(bufferSize int, sinceRV uint64, matches func(*element) bool, versioner storage.Versioner) *watcher {
	return &watcher{
		input:     make(chan *event, bufferSize),
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
		matches:   matches,
		sinceRV:   sinceRV,
		versioner: versioner,
	}
}

// offer queues e without blocking; false means the buffer is full and the
// watcher has fallen behind.
func (w *watcher) offer(e *event) bool {
	select {
	case w.input <- e:
		return true
	case <-w.done:
		return true // stopped: nothing to deliver, nothing to report
	default:
		return false
	}
}

// ResultChan implements watch.Interface.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface; it is safe to call more than once.
func (w *watcher) Stop() {
	w.once.Do(func() { close(w.done) })
}

// run delivers the backlog, then queued events, until the watcher is
// stopped; then it closes ResultChan.
func (w *watcher) run() {
	defer close(w.result)
	for _, e := range w.backlog {
		if !w.deliver(e) {
			return
		}
	}
	w.backlog = nil
	for {
		select {
		case <-w.done:
			return
		case e := <-w.input:
			if !w.deliver(e) {
				return
			}
		}
	}
}

// deliver sends what e means to this watcher; false once the watcher is stopped.
func (w *watcher) deliver(e *event) bool {
	if e.rv <= w.sinceRV {
		return true
	}
	out, ok := w.convert(e)
	if !ok {
		return true
	}
	select {
	case w.result <- out:
		w.sinceRV = e.rv
		return true
	case <-w.done:
		return false
	}
}

// convert turns a cache event into what this watcher sees, as upstream's
// cacheWatcher does: an update that moves an object into the watcher's
// selection is ADDED, one that moves it out is DELETED (carrying the old
// object at the new resourceVersion), and changes outside it are dropped.
func (w *watcher) convert(e *event) (watch.Event, bool) {
	if e.typ == watch.Bookmark {
		return watch.Event{Type: watch.Bookmark, Object: e.obj.object}, true
	}
	cur := e.typ != watch.Deleted && w.matches(e.obj)
	prev := e.prevObj != nil && w.matches(e.prevObj)
	switch {
	case e.typ == watch.Deleted:
		if !w.matches(e.obj) {
			return watch.Event{}, false
		}
		return watch.Event{Type: watch.Deleted, Object: e.obj.object}, true
	case cur && prev:
		return watch.Event{Type: watch.Modified, Object: e.obj.object}, true
	case cur:
		return watch.Event{Type: watch.Added, Object: e.obj.object}, true
	case prev:
		return watch.Event{Type: watch.Deleted, Object: w.atRV(e.prevObj.object, e.rv)}, true
	default:
		return watch.Event{}, false
	}
}

// atRV returns a copy of obj whose resourceVersion is rv.
func (w *watcher) atRV(obj runtime.Object, rv uint64) runtime.Object {
	obj = obj.DeepCopyObject()
	_ = w.versioner.UpdateObject(obj, rv) // fails only for objects without metadata; cached ones have it
	return obj
}
