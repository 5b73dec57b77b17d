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
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// element is one cached object with what selectors match it by, computed
// once when it enters the cache. Elements are immutable once stored, but
// for the encodings of their object, made on first use (encoding.go).
type element struct {
	key    string
	object runtime.Object
	labels labels.Set
	fields fields.Set

	encodings [numFormats]atomic.Pointer[Encoded]
}

func lessByKey(a, b *element) bool { return a.key < b.key }

// btreeDegree is upstream's choice for the watch cache's B-tree.
const btreeDegree = 16

// store is the cache's state at one resourceVersion: elements ordered by key.
//
// Clone is O(1): the clone and the original share nodes until either is
// written, so a clone is a cheap immutable snapshot. As google/btree states,
// Clone must not run concurrently with writes to s, but once it returns the
// clone may be read while s is written.
type store struct {
	tree *btree.BTreeG[*element]
	// index maps field -> value -> key -> element for the indexed fields.
	// Only the live store keeps it: clones have none.
	index map[string]map[string]map[string]*element
	// counts remembers counts of elements from a start key on; only clones,
	// which never change, have one.
	counts *countMemo
}

// newStore returns an empty store that indexes elements by indexFields.
func newStore(indexFields ...string) *store {
	s := &store{tree: btree.NewG(btreeDegree, lessByKey)}
	if len(indexFields) > 0 {
		s.index = map[string]map[string]map[string]*element{}
		for _, f := range indexFields {
			s.index[f] = map[string]map[string]*element{}
		}
	}
	return s
}

// upsert adds e or replaces the element with its key, returning the old one.
func (s *store) upsert(e *element) (*element, bool) {
	old, replaced := s.tree.ReplaceOrInsert(e)
	s.unindex(old)
	for field, values := range s.index {
		v := e.fields[field]
		if values[v] == nil {
			values[v] = map[string]*element{}
		}
		values[v][e.key] = e
	}
	return old, replaced
}

// remove deletes the element with key, returning it.
func (s *store) remove(key string) (*element, bool) {
	old, ok := s.tree.Delete(&element{key: key})
	s.unindex(old)
	return old, ok
}

func (s *store) unindex(e *element) {
	if e == nil {
		return
	}
	for field, values := range s.index {
		v := e.fields[field]
		delete(values[v], e.key)
		if len(values[v]) == 0 {
			delete(values, v)
		}
	}
}

// indexed returns the elements whose field is value, in key order, and
// whether field is indexed at all.
func (s *store) indexed(field, value string) ([]*element, bool) {
	values, ok := s.index[field]
	if !ok {
		return nil, false
	}
	items := slices.Collect(maps.Values(values[value]))
	slices.SortFunc(items, func(a, b *element) int { return strings.Compare(a.key, b.key) })
	return items, true
}

func (s *store) get(key string) (*element, bool) {
	return s.tree.Get(&element{key: key})
}

func (s *store) len() int { return s.tree.Len() }

// clone returns a copy-on-write snapshot of s.
func (s *store) clone() *store {
	return &store{tree: s.tree.Clone(), counts: &countMemo{}}
}

// list walks the elements under prefix in key order, starting at startKey
// (inclusive; "" for the beginning of prefix), and returns up to limit of
// those match accepts (limit <= 0: all). hasMore reports whether an element
// under prefix remains after the last one returned, matching or not, which
// is what decides whether a paged LIST needs a continue token.
func (s *store) list(prefix, startKey string, limit int, match func(*element) bool) (items []*element, hasMore bool) {
	s.ascend(prefix, startKey, func(e *element) bool {
		if limit > 0 && len(items) == limit {
			hasMore = true
			return false
		}
		if match == nil || match(e) {
			items = append(items, e)
		}
		return true
	})
	return items, hasMore
}

// count returns how many elements are under prefix from startKey on.
func (s *store) count(prefix, startKey string) int {
	if n, ok := s.counts.take(prefix, startKey); ok {
		return n
	}
	if s.allFrom(prefix, startKey) {
		return s.tree.Len()
	}
	n := 0
	s.ascend(prefix, startKey, func(*element) bool {
		n++
		return true
	})
	return n
}

// allFrom reports whether every element is under prefix from startKey on,
// as for the first page of a LIST of the whole resource: then the count is
// the tree's size, without a walk.
func (s *store) allFrom(prefix, startKey string) bool {
	lo, ok := s.tree.Min()
	if !ok {
		return true
	}
	hi, _ := s.tree.Max()
	return lo.key >= startKey && strings.HasPrefix(lo.key, prefix) && strings.HasPrefix(hi.key, prefix)
}

// ascend calls fn on the elements under prefix from startKey on, in key
// order, until fn returns false.
func (s *store) ascend(prefix, startKey string, fn func(*element) bool) {
	from := max(prefix, startKey)
	s.tree.AscendGreaterOrEqual(&element{key: from}, func(e *element) bool {
		return strings.HasPrefix(e.key, prefix) && fn(e)
	})
}

// countMemo remembers, for a store that never changes, how many elements
// are under a prefix from a start key on. A paged LIST's next page starts
// right after its last page, so the count its remainingItemCount needs is
// the last page's count minus the items that page returned: remembered,
// it saves walking the rest of the collection for every page. Each entry
// is used once; the memo is bounded (abandoned pagings leave entries).
type countMemo struct {
	mu sync.Mutex
	m  map[countKey]int
}

type countKey struct{ prefix, startKey string }

const maxCountMemo = 1024

// take returns and forgets the count from startKey on, if remembered.
func (m *countMemo) take(prefix, startKey string) (int, bool) {
	if m == nil {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := countKey{prefix, startKey}
	n, ok := m.m[k]
	delete(m.m, k)
	return n, ok
}

// put remembers n as the count from startKey on.
func (m *countMemo) put(prefix, startKey string, n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxCountMemo {
		m.m = map[countKey]int{}
	}
	m.m[countKey{prefix, startKey}] = n
}
