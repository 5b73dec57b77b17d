package watchcache

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// event is one change the cache applied, as watchers receive it.
type event struct {
	typ        watch.EventType
	rv         uint64
	recordTime time.Time
	obj        *element // the object after the change (before it, for a deletion)
	prevObj    *element // the object before the change; nil for an addition

	// cached wraps obj.object for every watcher the event is delivered to,
	// so it is serialized once; nil for bookmarks.
	cached *cachingObject
	// prevAtRV is prevObj's object at rv, as the DELETED event of a watcher
	// the change moves the object out of; made on first use.
	prevAtRVOnce sync.Once
	prevAtRV     *cachingObject
}

// history is the window of recent events watches are served from: every event
// younger than window is kept (up to maxEvents), older ones are dropped as new
// ones arrive. A watch from resourceVersion rv can be served iff rv >= startRV.
type history struct {
	clock     clock.PassiveClock
	window    time.Duration
	maxEvents int

	events []*event // oldest first; events[i].rv strictly increasing
	// startRV is the oldest resourceVersion a watch may start from: the
	// relist's RV, or the RV of the newest event dropped since.
	startRV uint64
}

func newHistory(c clock.PassiveClock, window time.Duration, maxEvents int) *history {
	return &history{clock: c, window: window, maxEvents: maxEvents}
}

// reset empties the history after a relist at listRV.
func (h *history) reset(listRV uint64) {
	h.events = nil
	h.startRV = listRV
}

// add appends e (whose RV must exceed every RV added before) and drops the
// events that fell out of the window or over the cap.
func (h *history) add(e *event) {
	h.events = append(h.events, e)
	cutoff := h.clock.Now().Add(-h.window)
	drop := 0
	for drop < len(h.events)-1 && (len(h.events)-drop > h.maxEvents || h.events[drop].recordTime.Before(cutoff)) {
		drop++
	}
	if drop > 0 {
		h.startRV = h.events[drop-1].rv
		// Copy rather than reslice so dropped events can be collected.
		h.events = append([]*event(nil), h.events[drop:]...)
	}
}

// tooOldError is returned for a watch from before the window.
type tooOldError struct {
	requested, oldest uint64
}

func (e tooOldError) Error() string {
	return fmt.Sprintf("too old resource version: %d (%d)", e.requested, e.oldest)
}

// since returns the events with RV > rv, oldest first, or a tooOldError if
// events after rv have already been dropped.
func (h *history) since(rv uint64) ([]*event, error) {
	if rv < h.startRV {
		return nil, tooOldError{requested: rv, oldest: h.startRV}
	}
	i := len(h.events)
	for i > 0 && h.events[i-1].rv > rv {
		i--
	}
	return append([]*event(nil), h.events[i:]...), nil
}

func (h *history) len() int { return len(h.events) }
