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

// pauseGC stops garbage collection while the server starts, and returns
// ready, to call once it is ready. A start allocates tens of megabytes
// while its live heap grows from a few: collected as they pile up, they
// cost the start several collections on its way to ready, and with
// GOGC=100 the first collection after it would come at once, the last
// live heap measured being that of the first instants.
//
// So the first collection comes when the process's memory is twice what
// it was at ready, as GOGC=100 would have it, or sooner if it reaches limit
// (or the limit set before, if lower); that collection restores the GOGC
// and memory limit set before, and, if it came after ready, first returns
// the memory it freed to the OS. A start whose heap outgrows limit (a large
// data dir) gets one collection there, never collections back to back.
func pauseGC(limit int64) (ready func()) {
	prevLimit := debug.SetMemoryLimit(-1) // reads it
	prevPercent := debug.SetGCPercent(-1)
	limit = min(limit, prevLimit)
	debug.SetMemoryLimit(limit)
	var mu sync.Mutex
	paused, isReady := true, false
	// The first collection finds the sentinel unreachable and runs its
	// cleanup, on the runtime's cleanup goroutine, which must not block.
	runtime.AddCleanup(new([64]byte), func(struct{}) {
		go func() {
			// Held through FreeOSMemory, the lock holds up no call of
			// ready: if isReady, that call has returned.
			mu.Lock()
			defer mu.Unlock()
			if isReady {
				// The start's garbage left spans of the heap idle
				// that the runtime would keep mapped for a long while.
				debug.FreeOSMemory()
			}
			paused = false
			debug.SetGCPercent(prevPercent)
			debug.SetMemoryLimit(prevLimit)
		}()
	}, struct{}{})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		isReady = true
		if paused {
			debug.SetMemoryLimit(min(2*totalMemory(), limit))
		}
	}
}

// totalMemory is the memory the Go runtime has mapped and not released,
// the measure of the memory limit.
func totalMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
