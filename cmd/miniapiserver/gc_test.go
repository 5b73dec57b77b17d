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
	"testing"
	"time"
)

// gcSettings reads the GOGC percent and memory limit in force.
func gcSettings() (percent, limit uint64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

const off = ^uint64(0) // GOGC=off, as /gc/gogc:percent reads it

// TestPauseGCUntilTheFirstCollectionAfterReady pauses, readies, then
// allocates garbage: the collection it comes to restores the settings of
// before.
func TestPauseGCUntilTheFirstCollectionAfterReady(t *testing.T) {
	percent, limit := gcSettings()
	ready := pauseGC(1 << 40).Ready
	if p, l := gcSettings(); p != off || l != min(1<<40, limit) {
		t.Fatalf("paused: GOGC %d and memory limit %d, want off and %d", p, l, min(1<<40, limit))
	}
	before := totalMemory()
	ready()
	if p, l := gcSettings(); p != off || int64(l) < before || int64(l) > 4*before {
		t.Fatalf("ready: GOGC %d and memory limit %d, want off and about twice the %d bytes mapped", p, l, before)
	}
	allocateUntil(t, func() bool {
		p, l := gcSettings()
		return p == percent && l == limit
	})
}

// TestPauseGCResumesAtTheLimit allocates garbage until the paused process
// reaches its limit: the collection there restores the settings of before,
// and ready then changes nothing.
func TestPauseGCResumesAtTheLimit(t *testing.T) {
	percent, limit := gcSettings()
	ready := pauseGC(totalMemory() + 64<<20).Ready
	restored := func() bool {
		p, l := gcSettings()
		return p == percent && l == limit
	}
	allocateUntil(t, restored)
	ready()
	if !restored() {
		p, l := gcSettings()
		t.Errorf("ready after the collection: GOGC %d and memory limit %d, want %d and %d as before", p, l, percent, limit)
	}
}

// TestPauseGCWhileStopping: once stopping, the process does not collect
// until its memory doubles, and the first collection restores nothing.
func TestPauseGCWhileStopping(t *testing.T) {
	percent, limit := gcSettings()
	t.Cleanup(func() {
		debug.SetGCPercent(int(percent)) // off reads as -1
		debug.SetMemoryLimit(int64(limit))
	})
	p := pauseGC(1 << 40)
	p.Ready()
	before := totalMemory()
	p.Stopping()
	if pc, l := gcSettings(); pc != off || int64(l) < before || int64(l) > 4*before {
		t.Fatalf("stopping: GOGC %d and memory limit %d, want off and about twice the %d bytes mapped", pc, l, before)
	}
	stopped, _ := gcSettings()
	runtime.GC()
	select {
	case <-p.resumed:
	case <-time.After(30 * time.Second):
		t.Fatal("the first collection did not run the pause's cleanup")
	}
	if pc, _ := gcSettings(); pc != stopped {
		t.Errorf("the first collection while stopping set GOGC %d, want it off", pc)
	}
}

// allocateUntil allocates garbage until done, for 30s at most.
func allocateUntil(t *testing.T, done func() bool) {
	t.Helper()
	var sink []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if done() {
			return
		}
		sink = make([]byte, 1<<20)
		sink[0] = 1
	}
	p, l := gcSettings()
	t.Fatalf("after 30s of allocating: GOGC %d and memory limit %d, not restored", p, l)
}
