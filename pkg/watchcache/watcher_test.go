package watchcache

import (
	"testing"

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
	ev := <-w.ResultChan()
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
