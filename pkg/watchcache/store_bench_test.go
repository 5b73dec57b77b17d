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
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

const benchPrefix = "/configmaps/ns/"

// benchConfigMapElement returns the element of configmap ns/name-<i>, as
// the cache builds it: its labels and fields computed once. Every tenth
// object is labelled tier=gold, the rest tier=bronze.
func benchConfigMapElement(i int, rv uint64) *element {
	name := fmt.Sprintf("name-%06d", i)
	tier := "bronze"
	if i%10 == 0 {
		tier = "gold"
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       "ns",
			ResourceVersion: fmt.Sprint(rv),
			Labels:          map[string]string{"app": "bench", "tier": tier},
		},
		Data: map[string]string{"key": "value"},
	}
	return &element{
		key:    benchPrefix + name,
		object: cm,
		labels: labels.Set(cm.Labels),
		fields: fields.Set{"metadata.name": cm.Name, "metadata.namespace": cm.Namespace},
	}
}

// benchStore returns a store holding configmaps 0 to n-1.
func benchStore(b *testing.B, n int) *store {
	b.Helper()
	s := newStore()
	for i := range n {
		s.upsert(benchConfigMapElement(i, uint64(i+1)))
	}
	if got := s.count(benchPrefix, ""); got != n {
		b.Fatalf("store count: got %d, want %d", got, n)
	}
	return s
}

// benchMatcher matches as a LIST's matcher does: the key under prefix and
// the labels matching sel.
func benchMatcher(prefix string, sel labels.Selector) func(*element) bool {
	return func(e *element) bool {
		return strings.HasPrefix(e.key, prefix) && (sel.Empty() || sel.Matches(e.labels))
	}
}

// BenchmarkListWalk measures reading one LIST page from a snapshot (a
// clone, as LISTs read): with a limit, each iteration reads the next page
// in turn, starting after the last key of the one before, as a paging
// client does, and starts over after the last page. With a selector a
// page walks past the objects it does not match (about 5000 for 500 of
// 10%), and the page after the last match is empty, as store.list
// reports more while unmatched objects remain.
func BenchmarkListWalk(b *testing.B) {
	gold := labels.SelectorFromSet(labels.Set{"tier": "gold"})
	for _, bc := range []struct {
		name      string
		objects   int
		limit     int
		selector  labels.Selector
		wantItems int // items of a full page
	}{
		{name: "Objects=10000/Limit=0", objects: 10000, limit: 0, selector: labels.Everything(), wantItems: 10000},
		{name: "Objects=10000/Limit=500", objects: 10000, limit: 500, selector: labels.Everything(), wantItems: 500},
		{name: "Objects=100000/Limit=500", objects: 100000, limit: 500, selector: labels.Everything(), wantItems: 500},
		{name: "Objects=10000/Limit=0/Selector=10pct", objects: 10000, limit: 0, selector: gold, wantItems: 1000},
		{name: "Objects=100000/Limit=500/Selector=10pct", objects: 100000, limit: 500, selector: gold, wantItems: 500},
	} {
		b.Run(bc.name, func(b *testing.B) {
			snap := benchStore(b, bc.objects).clone()
			match := benchMatcher(benchPrefix, bc.selector)
			b.ReportAllocs()
			startKey, iterations, items := "", 0, 0
			for b.Loop() {
				page, hasMore := snap.list(benchPrefix, startKey, bc.limit, match)
				if len(page) != bc.wantItems && hasMore {
					b.Fatalf("page from %q: got %d items and more, want %d", startKey, len(page), bc.wantItems)
				}
				startKey = ""
				if hasMore {
					startKey = page[len(page)-1].key + "\x00"
				}
				iterations++
				items += len(page)
			}
			b.ReportMetric(float64(items)/float64(iterations), "items/op")
		})
	}
}

// BenchmarkSnapshotLookup measures finding the state at a resourceVersion
// among the snapshots a cache keeps after every event: a store of 1000
// configmaps, updated N times with a snapshot after each update, looked up
// at random RVs. Updates alternate between two prebuilt versions of each
// object, so that setting up 100000 snapshots holds only the B-tree nodes
// the updates copy, not 100000 objects.
func BenchmarkSnapshotLookup(b *testing.B) {
	const objects = 1000
	var versions [2][]*element
	for v := range versions {
		for i := range objects {
			versions[v] = append(versions[v], benchConfigMapElement(i, uint64(v*objects+i+1)))
		}
	}
	for _, updates := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("Updates=%d", updates), func(b *testing.B) {
			s := newStore()
			for _, e := range versions[0] {
				s.upsert(e)
			}
			ss := newSnapshots()
			for i := range updates {
				rv := uint64(objects + i + 1)
				s.upsert(versions[(i/objects+1)%2][i%objects])
				ss.add(rv, s)
			}
			first, last := uint64(objects+1), uint64(objects+updates)
			rng := rand.New(rand.NewPCG(1, 2))
			rvs := make([]uint64, 4096)
			for i := range rvs {
				rvs[i] = first + rng.Uint64N(last-first+1)
			}
			if got, ok := ss.at(last); !ok || got.count(benchPrefix, "") != objects {
				b.Fatalf("snapshot at %d: got (%v, %v), want one of %d objects", last, got, ok, objects)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok := ss.at(rvs[i%len(rvs)]); !ok {
					b.Fatalf("at(%d): got no snapshot, want one", rvs[i%len(rvs)])
				}
				i++
			}
		})
	}
}
