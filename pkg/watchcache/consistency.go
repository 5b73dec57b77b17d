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
	"hash/fnv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
)

// The consistency checker is upstream's DetectCacheInconsistency: every
// Config.ConsistencyCheckPeriod the cache compares a digest (keys and
// resourceVersions, in key order) of its newest state with one of the
// storage's LIST at exactly that resourceVersion, and does the same for
// the oldest snapshot. A mismatch is counted
// (apiserver_storage_consistency_checks_total{status="failure"}), sends
// exact and continue reads to the storage (markConsistent), and relists,
// where upstream waits for a later check to pass; with
// Config.PanicOnInconsistency it panics instead, so that a test suite
// cannot miss it.

func (c *Cache) checkConsistencyEvery(ctx context.Context) {
	if c.cfg.ConsistencyCheckPeriod <= 0 {
		return
	}
	t := c.cfg.Clock.NewTicker(c.cfg.ConsistencyCheckPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.CheckConsistency(ctx)
		}
	}
}

// CheckConsistency runs one check; it reports whether the cache matched
// (true too when there was nothing to compare: not ready, or compacted).
// It checks the newest state and, with snapshots, the oldest one still
// served: a write to the live store that leaked into a clone would show
// there first.
func (c *Cache) CheckConsistency(ctx context.Context) bool {
	c.mu.Lock() // clone writes the tree's copy-on-write context
	ready, rv, state := c.ready, c.rv, c.store.clone()
	var olderRV uint64
	var older *store
	if c.snaps != nil && !c.inconsistent {
		if oldest, ok := c.snaps.oldest(); ok {
			olderRV, older = max(oldest.rv, c.snaps.floor), oldest.store
		}
	}
	c.mu.Unlock()
	if !ready {
		return true
	}
	msg := c.compare(ctx, rv, state)
	if msg == "" && older != nil && olderRV < rv {
		msg = c.compare(ctx, olderRV, older)
	}
	if msg == "" {
		c.recordConsistencyCheck(true)
		c.markConsistent(true)
		return true
	}
	c.recordConsistencyCheck(false)
	if c.cfg.PanicOnInconsistency {
		panic(msg)
	}
	klog.FromContext(ctx).Error(nil, msg+"; relisting")
	c.markConsistent(false)
	select {
	case c.relistRequested <- struct{}{}:
	default: // one is pending
	}
	return false
}

// compare compares state, the cache's state at rv, with the storage's; it
// returns what differs, or "" if nothing does or the storage cannot tell
// (it has compacted rv).
func (c *Cache) compare(ctx context.Context, rv uint64, state *store) string {
	list := c.cfg.NewListFunc()
	opts := storage.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact, Recursive: true, Predicate: storage.Everything}
	if err := c.cfg.Storage.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) && ctx.Err() == nil {
			klog.FromContext(ctx).V(2).Info("Watch cache consistency check could not list", "prefix", c.cfg.ResourcePrefix, "rv", rv, "err", err)
		}
		return ""
	}
	cached := newDigest()
	state.ascend(c.cfg.ResourcePrefix, "", func(e *element) bool {
		cached.add(e.key, e.object)
		return true
	})
	stored := newDigest()
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		key, err := c.cfg.KeyFunc(obj)
		if err == nil {
			stored.add(key, obj)
		}
		return err
	})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Watch cache consistency check could not read the list", "prefix", c.cfg.ResourcePrefix)
		return ""
	}
	if cached == stored {
		return ""
	}
	return fmt.Sprintf("watch cache of %s is inconsistent with the storage at resourceVersion %d: %d objects (digest %x) cached, %d stored (digest %x)",
		c.cfg.ResourcePrefix, rv, cached.n, cached.sum, stored.n, stored.sum)
}

// markConsistent is upstream's MarkConsistent. While a cache is
// inconsistent, exact and continue reads go to the storage (routeExact).
// Either way its snapshots start again from the live state (which
// listLatest reads): those from before it was found inconsistent may be
// as wrong, and so may those taken while it was.
func (c *Cache) markConsistent(consistent bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inconsistent != consistent {
		return // no change
	}
	c.inconsistent = !consistent
	if c.snaps != nil {
		c.snaps.reset(c.rv, c.store)
		c.recordSnapshots()
	}
}

// digest summarises a list of objects by their keys and resourceVersions, in order.
type digest struct {
	n   int
	sum uint64
}

func newDigest() digest { return digest{sum: fnv.New64a().Sum64()} }

func (d *digest) add(key string, obj runtime.Object) {
	rv := ""
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00", d.sum, key, rv)
	d.n, d.sum = d.n+1, h.Sum64()
}
