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
	"fmt"
	"sort"
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
	// final marks the bookmark a watcher gets as its stream ends at shutdown.
	final bool

	// shared wraps obj.object for the watchers the event is delivered to,
	// so that it is serialized once for all of them (cachedObject).
	shared sharedEncoding
	// prevAtRV is prevObj's object at rv, as the DELETED event of a watcher
	// the change moves the object out of; made on first use.
	prevAtRVOnce sync.Once
	prevAtRV     *cachingObject
}

// history is the window of recent events watches are served from, a ring
// buffer (upstream's shape) that costs O(1) per event: an event younger
// than window is kept (up to maxEvents, the newest win), an older one is
// dropped as new ones arrive, but never below minEvents, so that a quiet
// resource keeps at least what upstream's cache would (its buffer starts
// at 100 events and evicts only when full). A watch from resourceVersion
// rv can be served iff rv >= startRV.
type history struct {
	clock     clock.PassiveClock
	window    time.Duration
	minEvents int
	maxEvents int

	// buf holds n events from buf[first] on, wrapping around; their RVs
	// strictly increase. It grows by doubling up to maxEvents.
	buf   []*event
	first int
	n     int
	// startRV is the oldest resourceVersion a watch may start from: the
	// relist's RV, or the RV of the newest event dropped since.
	startRV uint64
}

// minHistory is upstream's initial history capacity: the fewest events
// the cache keeps, whatever their age.
const minHistory = 100

func newHistory(c clock.PassiveClock, window time.Duration, minEvents, maxEvents int) *history {
	return &history{clock: c, window: window, minEvents: min(minEvents, maxEvents), maxEvents: maxEvents}
}

// reset empties the history after a relist at listRV.
func (h *history) reset(listRV uint64) {
	clear(h.buf)
	h.first, h.n = 0, 0
	h.startRV = listRV
}

// at returns the i-th event, oldest first.
func (h *history) at(i int) *event { return h.buf[(h.first+i)%len(h.buf)] }

// add appends e (whose RV must exceed every RV added before) and drops the
// events that fell out of the window or over the cap.
func (h *history) add(e *event) {
	if h.n == len(h.buf) {
		if len(h.buf) < h.maxEvents {
			h.grow()
		} else {
			h.dropOldest()
		}
	}
	h.buf[(h.first+h.n)%len(h.buf)] = e
	h.n++
	cutoff := h.clock.Now().Add(-h.window)
	for h.n > max(h.minEvents, 1) && h.at(0).recordTime.Before(cutoff) {
		h.dropOldest()
	}
}

// grow doubles the buffer (up to maxEvents), oldest event first.
func (h *history) grow() {
	buf := make([]*event, min(max(2*len(h.buf), 16), h.maxEvents))
	for i := range h.n {
		buf[i] = h.at(i)
	}
	h.buf, h.first = buf, 0
}

func (h *history) dropOldest() {
	h.startRV = h.at(0).rv
	h.buf[h.first] = nil // let it be collected
	h.first = (h.first + 1) % len(h.buf)
	h.n--
}

// dropThrough drops the events up to rv, as if etcd had compacted them.
func (h *history) dropThrough(rv uint64) {
	for h.n > 0 && h.at(0).rv <= rv {
		h.dropOldest()
	}
	h.startRV = max(h.startRV, rv)
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
	return h.after(rv, h.n)
}

// after returns at most limit of the events with RV > rv, oldest first, or
// a tooOldError if events after rv have already been dropped.
func (h *history) after(rv uint64, limit int) ([]*event, error) {
	if rv < h.startRV {
		return nil, tooOldError{requested: rv, oldest: h.startRV}
	}
	i := sort.Search(h.n, func(i int) bool { return h.at(i).rv > rv })
	if i == h.n {
		return nil, nil
	}
	out := make([]*event, min(h.n-i, limit))
	for j := range out {
		out[j] = h.at(i + j)
	}
	return out, nil
}

// events returns every event held, oldest first.
func (h *history) events() []*event {
	out := make([]*event, h.n)
	for i := range out {
		out[i] = h.at(i)
	}
	return out
}

func (h *history) len() int { return h.n }
