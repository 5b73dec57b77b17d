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
	"slices"
	"sync"
	"testing"
)

// TestWatchesHandsOverTheOpenWatchesOnce: Shutdown returns the watches
// added and not forgotten, each once, and Add refuses from then on.
func TestWatchesHandsOverTheOpenWatchesOnce(t *testing.T) {
	var s Watches[int]
	if s.ShuttingDown() {
		t.Fatal("got shutting down before Shutdown, want not")
	}
	for w := range 4 {
		if !s.Add(w) {
			t.Fatalf("Add(%d) before Shutdown: got false, want true", w)
		}
	}
	s.Forget(1)
	s.Forget(1) // a second Forget is harmless
	s.Forget(9) // as is one of a watch never added

	got := s.Shutdown()
	slices.Sort(got)
	if want := []int{0, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("Shutdown: got %v, want %v", got, want)
	}
	if !s.ShuttingDown() {
		t.Error("got not shutting down after Shutdown, want shutting down")
	}
	if s.Add(4) {
		t.Error("Add after Shutdown: got true, want false")
	}
	s.Forget(0) // the caller ends what Shutdown handed over; it forgets itself
	if got := s.Shutdown(); len(got) != 0 {
		t.Errorf("second Shutdown: got %v, want none", got)
	}
}

// TestWatchesShutdownRacesWithAddAndForget: with watches opening and
// ending during Shutdown, each watch is handed over at most once, a watch
// Add refused never, and one added and never forgotten always.
func TestWatchesShutdownRacesWithAddAndForget(t *testing.T) {
	const n = 200
	var s Watches[int]
	added := make([]bool, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			added[w] = s.Add(w)
			if w%2 == 0 {
				s.Forget(w) // the even watches end at once
			}
		})
	}
	handedOver := s.Shutdown()
	wg.Wait()
	handedOver = append(handedOver, s.Shutdown()...) // none: Add refuses after the first

	got := map[int]int{}
	for _, w := range handedOver {
		got[w]++
	}
	for w := range n {
		switch {
		case got[w] > 1:
			t.Errorf("watch %d: handed over %d times, want at most once", w, got[w])
		case !added[w] && got[w] != 0:
			t.Errorf("watch %d: refused by Add but handed over", w)
		case added[w] && w%2 == 1 && got[w] != 1:
			t.Errorf("watch %d: added and never forgotten, but not handed over", w)
		}
	}
}
