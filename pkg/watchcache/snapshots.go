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

import "github.com/google/btree"

// snapshots keeps the store's state after every event, by resourceVersion,
// as copy-on-write clones (O(1) each; a write to the live store after a
// clone copies only the nodes on its path), so that "the state at exactly
// N" is the snapshot with the greatest RV <= N (upstream's storeSnapshotter,
// KEP-4988).
//
// A snapshot at RV s holds the state for every N from s up to the next
// snapshot's RV. Reads below floor (the oldest RV the history still serves,
// or etcd's compaction revision, whichever is newer) are refused, and
// snapshots that hold no state at or above floor are dropped.
type snapshots struct {
	tree  *btree.BTreeG[snapshot]
	floor uint64
}

type snapshot struct {
	rv    uint64
	store *store
}

func newSnapshots() *snapshots {
	return &snapshots{tree: btree.NewG(btreeDegree, func(a, b snapshot) bool { return a.rv < b.rv })}
}

// add records a clone of s as the state at rv.
func (ss *snapshots) add(rv uint64, s *store) {
	ss.tree.ReplaceOrInsert(snapshot{rv: rv, store: s.clone()})
}

// at returns the state at exactly rv: the snapshot with the greatest RV <= rv,
// if rv is not below the floor.
func (ss *snapshots) at(rv uint64) (*store, bool) {
	if rv < ss.floor {
		return nil, false
	}
	var found *store
	ss.tree.DescendLessOrEqual(snapshot{rv: rv}, func(s snapshot) bool {
		found = s.store
		return false
	})
	return found, found != nil
}

// oldest returns the oldest snapshot; it holds the state from max(its RV, floor).
func (ss *snapshots) oldest() (snapshot, bool) {
	return ss.tree.Min()
}

// latest returns the newest snapshot.
func (ss *snapshots) latest() (snapshot, bool) {
	return ss.tree.Max()
}

// raiseFloor refuses reads below rv from now on and drops the snapshots
// superseded below it, keeping the one that holds the state at rv.
func (ss *snapshots) raiseFloor(rv uint64) {
	if rv <= ss.floor {
		return
	}
	ss.floor = rv
	for {
		oldest, ok := ss.tree.Min()
		if !ok || oldest.rv >= rv {
			return
		}
		// oldest holds the state up to the next snapshot's RV: keep it if that is above rv.
		next := rv + 1
		ss.tree.AscendGreaterOrEqual(snapshot{rv: oldest.rv + 1}, func(s snapshot) bool {
			next = s.rv
			return false
		})
		if next > rv {
			return
		}
		ss.tree.DeleteMin()
	}
}

// reset drops every snapshot and starts again at rv (a relist).
func (ss *snapshots) reset(rv uint64, s *store) {
	ss.tree.Clear(false)
	ss.floor = rv
	ss.add(rv, s)
}

func (ss *snapshots) len() int { return ss.tree.Len() }
