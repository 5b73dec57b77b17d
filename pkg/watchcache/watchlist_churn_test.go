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
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goruntime "runtime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	"k8s.io/apiserver/pkg/storage"
)

// TestWatchListUnderChurnCompletes: a watch-list of every namespace, 5,000
// objects, while 8 writers churn another namespace. The churn overflows the
// watcher's buffer while it sends its initial events; it must still
// complete, every object once, then every later change in order, with none
// lost (upstream 1.37 would close it, and its client start over).
func TestWatchListUnderChurnCompletes(t *testing.T) {
	objects := 5000
	if testing.Short() {
		objects = 500
	}
	s, _ := newEtcdStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	put := func(ns, name string, v int) error {
		pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"v": strconv.Itoa(v)}}}
		return s.GuaranteedUpdate(ctx, "/pods/"+ns+"/"+name, &example.Pod{}, true, nil,
			func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) { return pod, nil, nil }, nil)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < objects; i += 8 {
				if err := put("big", fmt.Sprintf("obj-%05d", i), 0); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	c := newConformanceCacheOn(t, s)

	// The writers: each updates its own pod in namespace churn until stopped.
	stop := make(chan struct{})
	last := make([]int, 8) // the last acknowledged version of each writer's pod
	var writes atomic.Int64
	for w := range last {
		wg.Go(func() {
			for v := 1; ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := put("churn", fmt.Sprintf("writer-%d", w), v); err != nil {
					t.Error(err)
					return
				}
				last[w] = v
				writes.Add(1)
			}
		})
	}

	sendInitialEvents := true
	opts := storage.ListOptions{Recursive: true, SendInitialEvents: &sendInitialEvents, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Predicate: storage.Everything}
	opts.Predicate.AllowWatchBookmarks = true
	wl, err := c.Watch(ctx, "/pods/", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Stop()
	initial := map[string]bool{}
	for {
		ev := nextEvent(t, wl)
		pod, ok := unwrap(ev.Object).(*example.Pod)
		if !ok {
			t.Fatalf("%s event with a %T", ev.Type, ev.Object)
		}
		if ev.Type == watch.Bookmark {
			if pod.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				break
			}
			continue
		}
		if ev.Type != watch.Added || initial[pod.Namespace+"/"+pod.Name] {
			t.Fatalf("initial events: %s %s/%s (duplicate, or not ADDED)", ev.Type, pod.Namespace, pod.Name)
		}
		initial[pod.Namespace+"/"+pod.Name] = true
		if len(initial) == 1 {
			// A slow client: it reads nothing more until the churn has
			// overflowed what the watcher holds for it.
			target, deadline := writes.Load()+3*(defaultWatchBufferSize+resultBufferSize), time.Now().Add(30*time.Second)
			for writes.Load() < target {
				if time.Now().After(deadline) {
					t.Fatalf("the writers made %d writes in 30s, want %d", writes.Load(), target)
				}
				goruntime.Gosched()
			}
		}
	}
	if got := len(initial); got < objects || got > objects+len(last) {
		t.Fatalf("%d initial objects, want the %d in namespace big and up to %d writers'", got, objects, len(last))
	}

	// Stop the writers; a marker after their last writes ends the stream.
	close(stop)
	wg.Wait()
	if err := put("churn", "marker", 0); err != nil {
		t.Fatal(err)
	}
	var prevRV uint64
	seen := make([]int, len(last))
	for {
		ev := nextEvent(t, wl)
		if ev.Type == watch.Bookmark {
			continue
		}
		pod := unwrap(ev.Object).(*example.Pod)
		rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(pod)
		if err != nil {
			t.Fatal(err)
		}
		if rv <= prevRV {
			t.Fatalf("%s %s at RV %d after RV %d: out of order or repeated", ev.Type, pod.Name, rv, prevRV)
		}
		prevRV = rv
		if pod.Name == "marker" {
			break
		}
		var w, v int
		if _, err := fmt.Sscanf(pod.Name, "writer-%d", &w); err != nil {
			t.Fatalf("unexpected %s %s/%s", ev.Type, pod.Namespace, pod.Name)
		}
		v, _ = strconv.Atoi(pod.Labels["v"])
		if v != seen[w]+1 && seen[w] != 0 {
			t.Fatalf("writer-%d: version %d after %d: a change was lost", w, v, seen[w])
		}
		seen[w] = v
	}
	for w := range last {
		if seen[w] != last[w] {
			t.Errorf("writer-%d: last version seen %d, last written %d", w, seen[w], last[w])
		}
	}
}
