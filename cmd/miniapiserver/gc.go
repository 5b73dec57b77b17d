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

package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// startMemoryLimit is the most memory the process may take while starting
// before it collects garbage.
const startMemoryLimit = 256 << 20

// pauseGC stops garbage collection while the server starts, until the
// first collection after it is ready (see Ready), and again once it stops
// (see Stopping). A start allocates tens of megabytes while its live heap
// grows from a few: collected as they pile up, they cost the start several
// collections on its way to ready, and with GOGC=100 the first collection
// after it would come at once, the last live heap measured being that of
// the first instants.
//
// So the first collection comes when the process's memory is twice what
// it was at ready, as GOGC=100 would have it, or sooner if it reaches limit
// (or the limit set before, if lower); that collection restores the GOGC
// and memory limit set before, and, if it came after ready, first returns
// the memory it freed to the OS. A start whose heap outgrows limit (a large
// data dir) gets one collection there, never collections back to back.
//
// A stopping server ends every watch, and its handlers and their filters
// unwind, allocating as they go, just before the process exits: the
// collections that would follow are work for nothing, so from stopping on
// the process collects only if its memory doubles.
func pauseGC(limit int64) *gcPause {
	prevLimit := debug.SetMemoryLimit(-1) // reads it
	prevPercent := debug.SetGCPercent(-1)
	limit = min(limit, prevLimit)
	debug.SetMemoryLimit(limit)
	p := &gcPause{limit: limit, prevLimit: prevLimit, paused: true, resumed: make(chan struct{})}
	// The first collection finds the sentinel unreachable and runs its
	// cleanup, on the runtime's cleanup goroutine, which must not block.
	runtime.AddCleanup(new([64]byte), func(struct{}) {
		go func() {
			defer close(p.resumed)
			// Held through FreeOSMemory, the lock holds up no call of
			// Ready: if p.ready, that call has returned.
			p.mu.Lock()
			defer p.mu.Unlock()
			p.paused = false
			if p.stopping {
				return
			}
			if p.ready {
				// The start's garbage left spans of the heap idle
				// that the runtime would keep mapped for a long while.
				debug.FreeOSMemory()
			}
			debug.SetGCPercent(prevPercent)
			debug.SetMemoryLimit(prevLimit)
		}()
	}, struct{}{})
	return p
}

// gcPause is pauseGC's.
type gcPause struct {
	limit, prevLimit int64
	// resumed is closed once the first collection has restored the
	// settings (or not, if stopping).
	resumed chan struct{}

	// mu guards the state below.
	mu                      sync.Mutex
	paused, ready, stopping bool
}

// Ready is called once the server is ready.
func (p *gcPause) Ready() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = true
	if p.paused && !p.stopping {
		debug.SetMemoryLimit(min(2*totalMemory(), p.limit))
	}
}

// Stopping is called once the server begins to stop.
func (p *gcPause) Stopping() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopping = true
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(min(2*totalMemory(), p.prevLimit))
}

// totalMemory is the memory the Go runtime has mapped and not released,
// the measure of the memory limit.
func totalMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
