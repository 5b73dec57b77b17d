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
	"k8s.io/apimachinery/pkg/fields"
	"strings"
	"testing"
)

func el(key string) *element { return &element{key: key} }

func keys(es []*element) string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.key)
	}
	return strings.Join(ks, ",")
}

func TestStoreUpsertRemoveGet(t *testing.T) {
	s := newStore()
	if _, existed := s.upsert(el("/a")); existed {
		t.Error("first upsert: got existed, want new")
	}
	replacement := &element{key: "/a", fields: map[string]string{"v": "2"}}
	if old, existed := s.upsert(replacement); !existed || old.fields != nil {
		t.Errorf("second upsert: got %v, %v; want the first element back", old, existed)
	}
	if got, ok := s.get("/a"); !ok || got != replacement {
		t.Errorf("get: got %v, %v; want the replacement", got, ok)
	}
	if _, ok := s.remove("/a"); !ok {
		t.Error("remove: got not found")
	}
	if _, ok := s.get("/a"); ok || s.len() != 0 {
		t.Errorf("after remove: got len %d", s.len())
	}
}

func TestStoreListPagesWithinPrefix(t *testing.T) {
	s := newStore()
	for _, k := range []string{"/pods/a/1", "/pods/a/2", "/pods/a/3", "/pods/ab/1", "/pods/b/1", "/podsx/1"} {
		s.upsert(el(k))
	}
	for _, tc := range []struct {
		name, prefix, start string
		limit               int
		match               func(*element) bool
		want                string
		wantMore            bool
	}{
		{"whole prefix", "/pods/", "", 0, nil, "/pods/a/1,/pods/a/2,/pods/a/3,/pods/ab/1,/pods/b/1", false},
		{"namespace prefix excludes lookalikes", "/pods/a/", "", 0, nil, "/pods/a/1,/pods/a/2,/pods/a/3", false},
		{"first page", "/pods/", "", 2, nil, "/pods/a/1,/pods/a/2", true},
		{"continue after a key", "/pods/", "/pods/a/2\x00", 2, nil, "/pods/a/3,/pods/ab/1", true},
		{"last page", "/pods/", "/pods/ab/1\x00", 2, nil, "/pods/b/1", false},
		{"exact fit has no more", "/pods/a/", "", 3, nil, "/pods/a/1,/pods/a/2,/pods/a/3", false},
		{"filter walks past non-matching", "/pods/", "", 1, func(e *element) bool { return strings.HasSuffix(e.key, "3") }, "/pods/a/3", true},
		{"filter matching nothing", "/pods/", "", 2, func(*element) bool { return false }, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, more := s.list(tc.prefix, tc.start, tc.limit, tc.match)
			if keys(items) != tc.want || more != tc.wantMore {
				t.Errorf("got %s (more %v), want %s (more %v)", keys(items), more, tc.want, tc.wantMore)
			}
		})
	}
}

func TestStoreCountIsTheWalksCount(t *testing.T) {
	pods := newStore()
	for _, k := range []string{"/pods/a/1", "/pods/a/2", "/pods/a/3", "/pods/ab/1", "/pods/b/1"} {
		pods.upsert(el(k))
	}
	withLookalike := pods.clone()
	withLookalike.upsert(el("/podsx/1"))
	for _, tc := range []struct {
		name          string
		s             *store
		prefix, start string
		want          int
	}{
		{"whole store", pods, "/pods/", "", 5},
		{"whole store, start before its first key", pods, "/pods/", "/pods/", 5},
		{"after a key", pods, "/pods/", "/pods/a/2\x00", 3},
		{"a namespace", pods, "/pods/a/", "", 3},
		{"a lookalike outside the prefix", withLookalike, "/pods/", "", 5},
		{"empty", newStore(), "/pods/", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			walked := 0
			tc.s.ascend(tc.prefix, tc.start, func(*element) bool { walked++; return true })
			if n := tc.s.count(tc.prefix, tc.start); n != tc.want || walked != tc.want {
				t.Errorf("count %d, walk %d, want %d", n, walked, tc.want)
			}
		})
	}
}

func TestStoreCloneIsASnapshot(t *testing.T) {
	s := newStore()
	for i := range 100 {
		s.upsert(el(fmt.Sprintf("/k/%03d", i)))
	}
	snap := s.clone()
	s.remove("/k/000")
	s.upsert(el("/k/100"))
	s.upsert(&element{key: "/k/050", fields: map[string]string{"changed": "yes"}})
	if snap.len() != 100 {
		t.Errorf("snapshot: got len %d, want 100", snap.len())
	}
	if _, ok := snap.get("/k/000"); !ok {
		t.Error("snapshot lost an element removed from the original")
	}
	if _, ok := snap.get("/k/100"); ok {
		t.Error("snapshot sees an element added to the original")
	}
	if e, _ := snap.get("/k/050"); e.fields != nil {
		t.Error("snapshot sees an element replaced in the original")
	}
}

// TestStoreCloneReadWhileWriting is for the race detector: reading a clone
// while the original is written is the concurrency contract snapshots rely on.
func TestStoreCloneReadWhileWriting(t *testing.T) {
	s := newStore()
	for i := range 1000 {
		s.upsert(el(fmt.Sprintf("/k/%04d", i)))
	}
	snap := s.clone()
	done := make(chan int)
	go func() {
		items, _ := snap.list("/k/", "", 0, nil)
		done <- len(items)
	}()
	for i := range 1000 {
		s.remove(fmt.Sprintf("/k/%04d", i))
	}
	if n := <-done; n != 1000 {
		t.Errorf("listing the snapshot during writes: got %d items, want 1000", n)
	}
}

func TestStoreIndexFollowsUpdates(t *testing.T) {
	s := newStore("spec.nodeName")
	pod := func(name, node string) *element {
		return &element{key: "/pods/ns/" + name, fields: fields.Set{"spec.nodeName": node}}
	}
	s.upsert(pod("b", "n1"))
	s.upsert(pod("a", "n1"))
	s.upsert(pod("c", "n2"))
	s.upsert(pod("c", "n1")) // moved
	s.upsert(pod("b", "n2")) // moved
	s.remove("/pods/ns/a")
	for node, want := range map[string]string{"n1": "/pods/ns/c", "n2": "/pods/ns/b", "n3": ""} {
		items, ok := s.indexed("spec.nodeName", node)
		if got := keys(items); !ok || got != want {
			t.Errorf("index %s: got %q (%v), want %q", node, got, ok, want)
		}
	}
	if _, ok := s.indexed("metadata.name", "a"); ok {
		t.Error("an unindexed field reported as indexed")
	}
	if clone := s.clone(); clone.index != nil {
		t.Error("a clone carries the live store's index")
	}
}
