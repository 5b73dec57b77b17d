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
	"testing"
)

// storeOf returns a store holding one element per key.
func storeOf(keys ...string) *store {
	s := newStore()
	for _, k := range keys {
		s.upsert(&element{key: k})
	}
	return s
}

func snapshotKeys(t *testing.T, ss *snapshots, rv uint64) string {
	t.Helper()
	s, ok := ss.at(rv)
	if !ok {
		return "none"
	}
	items, _ := s.list("", "", 0, nil)
	return keys(items)
}

func TestSnapshotsServeTheStateAtOrBeforeAnRV(t *testing.T) {
	live := storeOf("/a")
	ss := newSnapshots()
	ss.reset(10, live) // a relist at 10
	live.upsert(&element{key: "/b"})
	ss.add(20, live)
	live.remove("/a")
	ss.add(30, live)
	live.upsert(&element{key: "/c"}) // not yet snapshotted: must not show in any

	for _, tc := range []struct {
		rv   uint64
		want string
	}{
		{9, "none"}, // before the relist
		{10, "/a"},
		{15, "/a"},
		{20, "/a,/b"},
		{29, "/a,/b"},
		{30, "/b"},
		{1000, "/b"},
	} {
		if got := snapshotKeys(t, ss, tc.rv); got != tc.want {
			t.Errorf("at %d: got %s, want %s", tc.rv, got, tc.want)
		}
	}
}

func TestSnapshotsFloorKeepsTheStateAtTheFloor(t *testing.T) {
	ss := newSnapshots()
	ss.reset(10, storeOf("/10"))
	for _, rv := range []uint64{20, 30} {
		ss.add(rv, storeOf(fmt.Sprintf("/%d", rv)))
	}

	ss.raiseFloor(25) // 20 holds the state at 25..29
	if ss.len() != 2 || snapshotKeys(t, ss, 25) != "/20" {
		t.Errorf("floor 25: got %d snapshots, state at 25 %s; want 2, /20", ss.len(), snapshotKeys(t, ss, 25))
	}
	if got := snapshotKeys(t, ss, 24); got != "none" {
		t.Errorf("floor 25: at 24 got %s, want none (below the floor)", got)
	}
	ss.raiseFloor(20) // lowering is a no-op
	if got := snapshotKeys(t, ss, 22); got != "none" {
		t.Errorf("after raiseFloor(20) on floor 25: at 22 got %s, want none", got)
	}
	ss.raiseFloor(30) // 30 itself holds it now
	if ss.len() != 1 || snapshotKeys(t, ss, 30) != "/30" {
		t.Errorf("floor 30: got %d snapshots, at 30 %s; want 1, /30", ss.len(), snapshotKeys(t, ss, 30))
	}
	ss.raiseFloor(100) // the newest is the live state: never dropped
	if ss.len() != 1 || snapshotKeys(t, ss, 100) != "/30" {
		t.Errorf("floor 100: got %d snapshots, at 100 %s; want 1, /30", ss.len(), snapshotKeys(t, ss, 100))
	}
	if latest, ok := ss.latest(); !ok || latest.rv != 30 {
		t.Errorf("latest: got %d, %v; want 30", latest.rv, ok)
	}

	ss.reset(200, storeOf("/200"))
	if ss.len() != 1 || snapshotKeys(t, ss, 150) != "none" || snapshotKeys(t, ss, 200) != "/200" {
		t.Errorf("after a relist at 200: got %d snapshots, at 150 %s, at 200 %s", ss.len(), snapshotKeys(t, ss, 150), snapshotKeys(t, ss, 200))
	}
}
