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
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
)

func rvs(es []*event) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.rv)
	}
	return out
}

func TestHistoryServesWatchesInsideTheWindow(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	h := newHistory(clock, 75*time.Second, minHistory, 100)
	h.reset(10)
	for rv := uint64(11); rv <= 15; rv++ {
		h.add(&event{typ: watch.Modified, rv: rv, recordTime: clock.Now()})
	}
	for _, tc := range []struct {
		from uint64
		want []uint64
	}{
		{10, []uint64{11, 12, 13, 14, 15}}, // from the relist's RV itself
		{13, []uint64{14, 15}},
		{15, nil},
		{99, nil}, // the future: nothing yet
	} {
		got, err := h.since(tc.from)
		if err != nil || len(got) != len(tc.want) || (len(got) > 0 && got[0].rv != tc.want[0]) {
			t.Errorf("since(%d): got %v, %v; want %v", tc.from, rvs(got), err, tc.want)
		}
	}
	var tooOld tooOldError
	if _, err := h.since(9); !errors.As(err, &tooOld) || tooOld.oldest != 10 {
		t.Errorf("since(9): got %v, want too old (oldest 10)", err)
	}
}

func TestHistoryDropsEventsOutsideTheWindow(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	h := newHistory(clock, 75*time.Second, 1, 100) // no minimum: age alone decides
	h.reset(1)
	h.add(&event{rv: 2, recordTime: clock.Now()})
	h.add(&event{rv: 3, recordTime: clock.Now()})
	clock.Step(60 * time.Second)
	h.add(&event{rv: 4, recordTime: clock.Now()})
	if h.len() != 3 {
		t.Fatalf("within the window: got %d events, want 3", h.len())
	}
	clock.Step(16 * time.Second) // rv 2 and 3 are now 76s old
	h.add(&event{rv: 5, recordTime: clock.Now()})
	if got := rvs(h.events()); len(got) != 2 || got[0] != 4 {
		t.Fatalf("after the window passed: got %v, want [4 5]", got)
	}
	if _, err := h.since(2); err == nil {
		t.Error("since(2): got nil error, want too old: event 3 was dropped")
	}
	if got, err := h.since(3); err != nil || len(got) != 2 {
		t.Errorf("since(3): got %v, %v; want [4 5] (3 was the newest dropped)", rvs(got), err)
	}
}

func TestHistoryCapKeepsTheNewestEvents(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	h := newHistory(clock, 75*time.Second, 1, 3)
	h.reset(0)
	for rv := uint64(1); rv <= 10; rv++ {
		h.add(&event{rv: rv, recordTime: clock.Now()})
	}
	if got := rvs(h.events()); len(got) != 3 || got[0] != 8 || h.startRV != 7 {
		t.Errorf("got %v (start %d), want [8 9 10] (start 7)", got, h.startRV)
	}
	// The newest event is never dropped, even if it is old itself.
	clock.Step(time.Hour)
	h.add(&event{rv: 11, recordTime: clock.Now().Add(-2 * time.Hour)})
	if h.len() != 1 || h.startRV != 10 {
		t.Errorf("got %v (start %d), want [11] (start 10)", rvs(h.events()), h.startRV)
	}
}

// TestHistoryKeepsAtLeastUpstreamsMinimum: age alone never takes a quiet
// resource's history below the 100 events upstream's buffer starts with.
func TestHistoryKeepsAtLeastUpstreamsMinimum(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	h := newHistory(clock, 75*time.Second, minHistory, 1000)
	h.reset(0)
	for rv := uint64(1); rv <= 150; rv++ {
		h.add(&event{rv: rv, recordTime: clock.Now()})
	}
	clock.Step(time.Hour) // every event is now far outside the window
	h.add(&event{rv: 151, recordTime: clock.Now()})
	if got := rvs(h.events()); len(got) != minHistory || got[0] != 52 || h.startRV != 51 {
		t.Errorf("got %d events from %d (start %d), want the newest %d, from 52 (start 51)", len(got), got[0], h.startRV, minHistory)
	}
}

// TestHistoryWrapsAround: a full ring drops its oldest events and serves
// the rest in order across the wrap.
func TestHistoryWrapsAround(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	h := newHistory(clock, 75*time.Second, 1, 20)
	h.reset(0)
	for rv := uint64(1); rv <= 53; rv++ {
		h.add(&event{rv: rv, recordTime: clock.Now()})
	}
	got, err := h.since(40)
	if err != nil || len(got) != 13 || got[0].rv != 41 || got[12].rv != 53 {
		t.Fatalf("since(40): got %v, %v; want 41..53", rvs(got), err)
	}
	for i := 1; i < len(got); i++ {
		if got[i].rv != got[i-1].rv+1 {
			t.Fatalf("since(40): got %v, want consecutive RVs", rvs(got))
		}
	}
	if _, err := h.since(32); err == nil {
		t.Error("since(32): got nil error, want too old (33 was dropped with the cap of 20)")
	}
}

// BenchmarkHistoryAppend: adding an event to a full history costs the same
// whatever its size.
func BenchmarkHistoryAppend(b *testing.B) {
	for _, size := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("Events=%d", size), func(b *testing.B) {
			clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
			h := newHistory(clock, 75*time.Second, minHistory, size)
			h.reset(0)
			rv := uint64(0)
			for range size {
				rv++
				h.add(&event{rv: rv, recordTime: clock.Now()})
			}
			events := make([]*event, b.N)
			for i := range events {
				events[i] = &event{rv: rv + uint64(i) + 1, recordTime: clock.Now()}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, e := range events {
				h.add(e)
			}
		})
	}
}
