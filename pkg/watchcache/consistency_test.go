package watchcache

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
	if !c.checkConsistency(ctx) {
		t.Fatal("check of a cache in sync: failed, want it to pass")
	}
	if isInconsistent(c) {
		t.Fatal("a passing check marked the cache inconsistent")
	}

	loseObject(c, "/pods/ns/b")
	rv := c.ResourceVersion()
	if c.checkConsistency(ctx) {
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
	if !c.checkConsistency(ctx) {
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
	c.checkConsistency(context.Background())
}
