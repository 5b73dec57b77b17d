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
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// TestWatcherSetFindsTheWatchersAnEventConcerns: dispatch looks only at
// the watchers of the event's namespace (or object, or the whole resource)
// and, among those pinned to a node, only at the node the pod was or is
// on; a watcher on a field the cache does not index is a candidate for
// its whole scope (its selector filters later).
func TestWatcherSetFindsTheWatchersAnEventConcerns(t *testing.T) {
	s := newWatcherSet([]string{"spec.nodeName"})
	names := map[*watcher]string{}
	add := func(name, key, fieldSelector string) {
		sel, err := fields.ParseSelector(fieldSelector)
		if err != nil {
			t.Fatal(err)
		}
		w := newWatcher(1, 0, nil, storage.APIObjectVersioner{})
		w.scope = s.scopeOf(key, storage.SelectionPredicate{Field: sel})
		s.add(w)
		names[w] = name
	}
	add("all pods", "/pods/", "")
	add("namespace a", "/pods/a/", "")
	add("namespace b", "/pods/b/", "")
	add("node x", "/pods/", "spec.nodeName=x")
	add("node y", "/pods/", "spec.nodeName=y")
	add("namespace a, node x", "/pods/a/", "spec.nodeName=x")
	add("unscheduled", "/pods/", "spec.nodeName=")
	add("pod a/p1", "/pods/a/p1", "")
	add("pod a/p10", "/pods/a/p10", "")
	add("by name (not indexed)", "/pods/", "metadata.name=p1")

	pod := func(ns, name, node string) *element {
		return &element{key: "/pods/" + ns + "/" + name, fields: fields.Set{"metadata.name": name, "spec.nodeName": node}}
	}
	candidates := func(e *event) []string {
		var got []string
		s.candidates(e, func(w *watcher) { got = append(got, names[w]) })
		slices.Sort(got)
		return got
	}
	for _, tc := range []struct {
		name string
		ev   *event
		want []string
	}{
		{"a pod created on node x", &event{typ: watch.Added, obj: pod("a", "p1", "x")},
			[]string{"all pods", "by name (not indexed)", "namespace a", "namespace a, node x", "node x", "pod a/p1"}},
		{"a pod moved from node x to y", &event{typ: watch.Modified, obj: pod("a", "p1", "y"), prevObj: pod("a", "p1", "x")},
			[]string{"all pods", "by name (not indexed)", "namespace a", "namespace a, node x", "node x", "node y", "pod a/p1"}},
		{"an unscheduled pod in another namespace", &event{typ: watch.Added, obj: pod("b", "p2", "")},
			[]string{"all pods", "by name (not indexed)", "namespace b", "unscheduled"}},
		{"a pod in a namespace nobody watches", &event{typ: watch.Deleted, obj: pod("c", "p1", "z")},
			[]string{"all pods", "by name (not indexed)"}},
	} {
		if got := candidates(tc.ev); !slices.Equal(got, tc.want) {
			t.Errorf("%s: candidates %q, want %q", tc.name, got, tc.want)
		}
	}

	for w, name := range names {
		if name == "namespace a" || name == "pod a/p1" {
			s.remove(w)
			s.remove(w) // twice is harmless
		}
	}
	want := []string{"all pods", "by name (not indexed)", "namespace a, node x", "node x"}
	if got := candidates(&event{typ: watch.Added, obj: pod("a", "p1", "x")}); !slices.Equal(got, want) {
		t.Errorf("after removing two watchers: candidates %q, want %q", got, want)
	}
	// "all pods" and "by name (not indexed)" share a bucket.
	if len(s.all) != 8 || len(s.buckets) != 7 {
		t.Errorf("after removing two of 10 watchers: %d watchers in %d buckets, want 8 in 7", len(s.all), len(s.buckets))
	}
}
