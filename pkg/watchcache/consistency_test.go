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
	"strings"
	"testing"

	"k8s.io/utils/clock"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage"
)

// newCheckedCache is a ready cache of three pods with snapshots on.
func newCheckedCache(t *testing.T, panicOnInconsistency bool) (*Cache, storage.Interface) {
	t.Helper()
	s, _ := newEtcdStore(t)
	for _, name := range []string{"a", "b", "c"} {
		createPod(t, s, name)
	}
	cfg := podCacheConfig(s)
	cfg.Snapshots = true
	cfg.PanicOnInconsistency = panicOnInconsistency
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCache(t, c)
	waitFor(t, "the cache to be ready", c.Ready)
	return c, s
}

func isInconsistent(c *Cache) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.inconsistent
}

// loseObject makes the cache silently forget one object, as a bug would.
func loseObject(c *Cache, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store.remove(key)
}

// TestConsistencyCheckFindsAndRepairsADivergence: the check passes on a
// cache in sync; once the cache has lost an object it fails, exact reads
// go to the storage meanwhile, and the relist it asks for repairs the
// cache, after which the check passes again.
func TestConsistencyCheckFindsAndRepairsADivergence(t *testing.T) {
	c, _ := newCheckedCache(t, false)
	ctx := context.Background()
	if !c.CheckConsistency(ctx) {
		t.Fatal("check of a cache in sync: failed, want it to pass")
	}
	if isInconsistent(c) {
		t.Fatal("a passing check marked the cache inconsistent")
	}

	loseObject(c, "/pods/ns/b")
	rv := c.ResourceVersion()
	if c.CheckConsistency(ctx) {
		t.Fatal("check of a cache missing an object: passed, want it to fail")
	}
	// Until the relist, or if it already happened: exact reads are right either way.
	if isInconsistent(c) {
		route, err := c.route("/pods/", storage.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact, Recursive: true, Predicate: storage.Everything})
		if err != nil || route.source != fromEtcd || route.reason != reasonInconsistent {
			t.Errorf("exact LIST while inconsistent: routed %+v (%v), want etcd, reason %q", route, err, reasonInconsistent)
		}
	}
	waitFor(t, "the relist to repair the cache", func() bool {
		c.mu.RLock()
		defer c.mu.RUnlock()
		_, ok := c.store.get("/pods/ns/b")
		return ok && !c.inconsistent
	})
	if !c.CheckConsistency(ctx) {
		t.Error("check after the relist: failed, want it to pass")
	}
}

// TestConsistencyCheckPanicsWhenAsked: with PanicOnInconsistency a failed
// check panics, naming the resource, so that a test suite cannot miss it.
func TestConsistencyCheckPanicsWhenAsked(t *testing.T) {
	c, _ := newCheckedCache(t, true)
	loseObject(c, "/pods/ns/a")
	defer func() {
		r := recover()
		if msg := fmt.Sprint(r); r == nil || !strings.Contains(msg, "/pods/") || !strings.Contains(msg, "inconsistent") {
			t.Errorf("failed check: recovered %v, want a panic naming /pods/ as inconsistent", r)
		}
	}()
	c.CheckConsistency(context.Background())
}

// TestConsistencyCheckComparesTheOldestSnapshot: a snapshot that has gone
// wrong while the live state is right (a write leaking into a clone) is
// found too.
func TestConsistencyCheckComparesTheOldestSnapshot(t *testing.T) {
	c, s := newCheckedCache(t, false)
	createPod(t, s, "d")
	rv := createPod(t, s, "e")
	waitFor(t, "the cache to see the writes", func() bool { return c.ResourceVersion() >= rv })
	if !c.CheckConsistency(context.Background()) {
		t.Fatal("check of a cache in sync: failed, want it to pass")
	}
	c.mu.Lock()
	oldest, ok := c.snaps.oldest()
	if ok && oldest.rv < rv {
		oldest.store.remove("/pods/ns/a")
	}
	c.mu.Unlock()
	if !ok || oldest.rv >= rv {
		t.Fatalf("oldest snapshot: %+v (%v), want one older than %d", oldest.rv, ok, rv)
	}
	if c.CheckConsistency(context.Background()) {
		t.Error("check with a wrong older snapshot: passed, want it to fail")
	}
}

// TestMarkConsistent is upstream's (cacher_test.go): exact LISTs skip etcd
// while the cache is consistent; once it is marked inconsistent its
// snapshots are dropped and exact LISTs go to etcd, also at
// resourceVersions it reaches meanwhile; marked consistent again, it
// serves the ones after that from its snapshots.
func TestMarkConsistent(t *testing.T) {
	s, _ := newEtcdStore(t)
	c, counting := newSnapshotCache(t, s, clock.RealClock{})
	etcdLists := func(rv uint64) int64 {
		t.Helper()
		waitFor(t, "the cache to reach the write", func() bool { return c.ResourceVersion() >= rv })
		before := counting.lists.Load()
		podsAt(t, c, storage.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		return counting.lists.Load() - before
	}

	rv1 := createPod(t, s, "a")
	if n := etcdLists(rv1); n != 0 {
		t.Errorf("consistent cache, exact LIST: %d LISTs reached etcd, want 0", n)
	}

	c.markConsistent(false)
	if n := etcdLists(rv1); n != 1 {
		t.Errorf("inconsistent cache, exact LIST at an older snapshot: %d LISTs reached etcd, want 1", n)
	}
	rv2 := createPod(t, s, "b")
	if n := etcdLists(rv2); n != 1 {
		t.Errorf("inconsistent cache, exact LIST at a new resourceVersion: %d LISTs reached etcd, want 1", n)
	}

	c.markConsistent(true)
	rv3 := createPod(t, s, "c")
	if n := etcdLists(rv3); n != 0 {
		t.Errorf("consistent again, exact LIST at a new resourceVersion: %d LISTs reached etcd, want 0", n)
	}
	if n := etcdLists(rv1); n != 1 {
		t.Errorf("consistent again, exact LIST at a snapshot dropped while inconsistent: %d LISTs reached etcd, want 1", n)
	}
}
