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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	goruntime "runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

func cmElement(name, rv string, lbls map[string]string) *element {
	cm := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv, Labels: lbls}}
	return &element{key: "/configmaps/ns/" + name, object: cm, labels: lbls}
}

func TestWatcherConvertsSelectorTransitions(t *testing.T) {
	selector := labels.SelectorFromSet(labels.Set{"app": "web"})
	w := newWatcher(10, 0, func(e *element) bool { return selector.Matches(labels.Set(e.labels)) }, storage.APIObjectVersioner{})
	web, other := map[string]string{"app": "web"}, map[string]string{"app": "db"}
	for _, tc := range []struct {
		name     string
		ev       *event
		wantType watch.EventType // "" = not delivered
		wantRV   string
	}{
		{"added matching", &event{typ: watch.Added, rv: 2, obj: cmElement("a", "2", web)}, watch.Added, "2"},
		{"added not matching", &event{typ: watch.Added, rv: 3, obj: cmElement("b", "3", other)}, "", ""},
		{"modified inside", &event{typ: watch.Modified, rv: 4, obj: cmElement("a", "4", web), prevObj: cmElement("a", "2", web)}, watch.Modified, "4"},
		{"moved in", &event{typ: watch.Modified, rv: 5, obj: cmElement("b", "5", web), prevObj: cmElement("b", "3", other)}, watch.Added, "5"},
		{"moved out: old object at the new RV", &event{typ: watch.Modified, rv: 6, obj: cmElement("a", "6", other), prevObj: cmElement("a", "4", web)}, watch.Deleted, "6"},
		{"modified outside", &event{typ: watch.Modified, rv: 7, obj: cmElement("a", "7", other), prevObj: cmElement("a", "6", other)}, "", ""},
		{"deleted matching", &event{typ: watch.Deleted, rv: 8, obj: cmElement("b", "8", web), prevObj: cmElement("b", "5", web)}, watch.Deleted, "8"},
		{"deleted outside", &event{typ: watch.Deleted, rv: 9, obj: cmElement("a", "9", other)}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := w.convert(tc.ev)
			if tc.wantType == "" {
				if ok {
					t.Errorf("got %s, want nothing delivered", got.Type)
				}
				return
			}
			if !ok || got.Type != tc.wantType {
				t.Fatalf("got %s (%v), want %s", got.Type, ok, tc.wantType)
			}
			if rv := unwrap(got.Object).(*metav1.PartialObjectMetadata).ResourceVersion; rv != tc.wantRV {
				t.Errorf("got resourceVersion %s, want %s", rv, tc.wantRV)
			}
		})
	}
	// Moving out must not have changed the cached (shared) old object.
	prev := cmElement("a", "4", web)
	w.convert(&event{typ: watch.Modified, rv: 6, obj: cmElement("a", "6", other), prevObj: prev})
	if rv := prev.object.(*metav1.PartialObjectMetadata).ResourceVersion; rv != "4" {
		t.Errorf("cached object mutated: got resourceVersion %s, want 4", rv)
	}
}

func TestWatcherBufferIsBoundedAndDeliveryOrdered(t *testing.T) {
	all := func(*element) bool { return true }
	w := newWatcher(2, 1, all, storage.APIObjectVersioner{})
	if !w.offer(&event{typ: watch.Added, rv: 1, obj: cmElement("old", "1", nil)}) ||
		!w.offer(&event{typ: watch.Added, rv: 2, obj: cmElement("a", "2", nil)}) {
		t.Fatal("offer into an empty buffer failed")
	}
	if w.offer(&event{typ: watch.Added, rv: 3, obj: cmElement("b", "3", nil)}) {
		t.Fatal("offer into a full buffer: got true, want false (the watcher fell behind)")
	}
	go w.run()
	ev := nextEvent(t, w)
	if unwrap(ev.Object).(*metav1.PartialObjectMetadata).Name != "a" {
		t.Errorf("got %s first, want a: events at or before sinceRV are skipped", unwrap(ev.Object).(*metav1.PartialObjectMetadata).Name)
	}
	w.Stop()
	w.Stop()
	for range w.ResultChan() {
	}
	if !w.offer(&event{typ: watch.Added, rv: 4, obj: cmElement("c", "4", nil)}) {
		t.Error("offer to a stopped watcher: got false, want true (nothing to report)")
	}
}

// unwrap returns the object a watcher delivered, without its caching wrapper.
func unwrap(obj runtime.Object) runtime.Object {
	if co, ok := obj.(runtime.CacheableObject); ok {
		return co.GetObject()
	}
	return obj
}

// TestDeliveredEventsDropTheirEncodings: once every watcher has taken an
// event, the history no longer holds the encodings made for them; they go
// when the last response has written them. A watch replaying the event
// from the history later still gets it, encoded afresh.
func TestDeliveredEventsDropTheirEncodings(t *testing.T) {
	s, _ := newEtcdStore(t)
	c := newConformanceCacheOn(t, s)
	from := c.ResourceVersion()
	live, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(from), Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop()
	rv := createPod(t, s, "p")
	ev := nextEvent(t, live)
	co, ok := ev.Object.(*cachingObject)
	if !ok {
		t.Fatalf("live event object: got %T, want the shared *cachingObject", ev.Object)
	}
	var buf bytes.Buffer
	if err := co.CacheEncode("json", func(obj runtime.Object, w io.Writer) error { return json.NewEncoder(w).Encode(obj) }, &buf); err != nil {
		t.Fatal(err)
	}
	c.mu.RLock()
	events, err := c.history.since(from)
	c.mu.RUnlock()
	if err != nil || len(events) != 1 || events[0].rv != rv {
		t.Fatalf("history since %d: got %v, %v; want the one event at %d", from, events, err, rv)
	}
	recorded := events[0]
	waitFor(t, "the history to let go of the delivered event's encodings", func() bool { return recorded.shared.strong.Load() == nil })

	ev, co = watch.Event{}, nil // what the response would drop once written
	waitFor(t, "the encodings to be collected", func() bool {
		goruntime.GC()
		recorded.shared.mu.Lock()
		defer recorded.shared.mu.Unlock()
		return recorded.shared.weak.Value() == nil
	})

	replay, err := c.Watch(context.Background(), "/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(from), Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Stop()
	again := nextEvent(t, replay)
	if m, err := meta.Accessor(again.Object); again.Type != watch.Added || err != nil || m.GetName() != "p" || m.GetResourceVersion() != fmt.Sprint(rv) {
		t.Errorf("replayed event: got %s %v, want ADDED p at %d", again.Type, again.Object, rv)
	}
}
