package watchcache

import (
	"maps"
	"slices"
	"strings"
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

	encodings [numFormats]atomic.Pointer[[]byte]
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
	return &store{tree: s.tree.Clone()}
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
	n := 0
	s.ascend(prefix, startKey, func(*element) bool {
		n++
		return true
	})
	return n
}

// ascend calls fn on the elements under prefix from startKey on, in key
// order, until fn returns false.
func (s *store) ascend(prefix, startKey string, fn func(*element) bool) {
	from := max(prefix, startKey)
	s.tree.AscendGreaterOrEqual(&element{key: from}, func(e *element) bool {
		return strings.HasPrefix(e.key, prefix) && fn(e)
	})
}
