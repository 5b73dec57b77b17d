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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

// BenchmarkApplyAndDispatch applies one update to the cache (store,
// history, snapshot) and dispatches it to every watcher: the cost of an
// event on the cache's hot path, per watcher count. Watchers' own
// delivery runs on their goroutines; the timer stops while they drain.
// With Namespaces, each watcher watches a namespace of its own and the
// updates are in the first: the others must cost next to nothing.
func BenchmarkApplyAndDispatch(b *testing.B) {
	for _, bc := range []struct {
		watchers   int
		namespaces bool
	}{{1, false}, {100, false}, {1000, false}, {1000, true}} {
		watchers := bc.watchers
		name := fmt.Sprintf("Watchers=%d", watchers)
		if bc.namespaces {
			name += "/Namespaces"
		}
		b.Run(name, func(b *testing.B) {
			c, err := New(Config{
				Storage:        idleStorage{},
				ResourcePrefix: "/pods/",
				NewListFunc:    func() k8sruntime.Object { return &example.PodList{} },
				KeyFunc:        func(obj k8sruntime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) },
				GetAttrsFunc:   storage.DefaultNamespaceScopedAttr,
				Snapshots:      true,
			})
			if err != nil {
				b.Fatal(err)
			}
			var ws []*watcher
			for i := range watchers {
				key := "/pods/"
				if bc.namespaces {
					key = fmt.Sprintf("/pods/ns-%d/", i)
				}
				w, err := c.register(key, storage.ListOptions{Recursive: true, Predicate: storage.Everything}, watchRequest{}, time.Time{})
				if err != nil {
					b.Fatal(err)
				}
				go w.run()
				go func() {
					for range w.ResultChan() {
					}
				}()
				ws = append(ws, w)
			}
			b.Cleanup(func() {
				for _, w := range ws {
					w.Stop()
				}
			})
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i%100), Namespace: "ns-0", ResourceVersion: fmt.Sprint(i + 1)}}
				if err := c.apply(watch.Event{Type: watch.Modified, Object: pod}); err != nil {
					b.Fatal(err)
				}
				if i%50 == 49 { // let the watchers catch up, untimed, so none is closed
					b.StopTimer()
					drained(ws)
					b.StartTimer()
				}
			}
			b.StopTimer()
			drained(ws)
			receivers := watchers
			if bc.namespaces {
				receivers = 1
			}
			b.ReportMetric(float64(b.N*receivers)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// idleStorage is a storage the benchmark never reads: it feeds the cache
// with apply itself.
type idleStorage struct{ storage.Interface }

func (idleStorage) RequestWatchProgress(context.Context) error { return nil }

// drained waits until every watcher has taken all its queued events.
func drained(ws []*watcher) {
	for _, w := range ws {
		for len(w.input) > 0 {
			runtime.Gosched()
		}
	}
}

// BenchmarkHistoryHeapWithWatchers applies 10,000 updates of 1 KiB pods to
// a cache whose 10 watchers each encode every event as JSON, as watch
// responses do, then reports the heap in use after a GC per event the
// history holds: what keeping events (and whatever they hold) costs.
func BenchmarkHistoryHeapWithWatchers(b *testing.B) {
	const events, watchers = 10000, 10
	for range b.N {
		c, err := New(Config{
			Storage:        idleStorage{},
			ResourcePrefix: "/pods/",
			NewListFunc:    func() k8sruntime.Object { return &example.PodList{} },
			KeyFunc:        func(obj k8sruntime.Object) (string, error) { return storage.NamespaceKeyFunc("/pods/", obj) },
			GetAttrsFunc:   storage.DefaultNamespaceScopedAttr,
		})
		if err != nil {
			b.Fatal(err)
		}
		var ws []*watcher
		for range watchers {
			w, err := c.register("/pods/", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, watchRequest{}, time.Time{})
			if err != nil {
				b.Fatal(err)
			}
			go w.run()
			go func() {
				for ev := range w.ResultChan() {
					if co, ok := ev.Object.(k8sruntime.CacheableObject); ok {
						_ = co.CacheEncode("json", func(obj k8sruntime.Object, w io.Writer) error { return json.NewEncoder(w).Encode(obj) }, io.Discard)
					}
				}
			}()
			ws = append(ws, w)
		}
		before := heapInUse()
		for i := range events {
			pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i%100), Namespace: "ns", ResourceVersion: fmt.Sprint(i + 1),
				Annotations: map[string]string{"payload": strings.Repeat(string(rune('a'+i%26)), 1024)}}}
			if err := c.apply(watch.Event{Type: watch.Modified, Object: pod}); err != nil {
				b.Fatal(err)
			}
			if i%50 == 49 {
				drained(ws)
			}
		}
		drained(ws)
		if n := c.history.len(); n != events {
			b.Fatalf("history holds %d events, want %d", n, events)
		}
		b.ReportMetric(float64(heapInUse()-before)/events, "heap-B/event")
		runtime.KeepAlive(c)
		for _, w := range ws {
			w.Stop()
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
