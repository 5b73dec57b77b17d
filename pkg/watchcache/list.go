package watchcache

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// Upstream's timeouts: how long a read waits for the cache to reach a
// resourceVersion, and how often it asks etcd for progress meanwhile.
const (
	freshnessTimeout        = 3 * time.Second
	progressRequestInterval = 100 * time.Millisecond
)

// GetList serves from the cache the LISTs upstream's cache serves without
// pagination: resourceVersion "0" (any state; limit ignored, as upstream),
// N with NotOlderThan semantics and no limit (after waiting for N), and ""
// (a consistent read: etcd's current revision, then waiting for it; etcd
// serves it if the cache does not catch up). Paged, exact and continued
// LISTs go to the storage until the cache keeps snapshots.
func (c *Cache) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if !c.servesList(opts) {
		return c.cfg.Storage.GetList(ctx, key, opts, listObj)
	}
	preparedKey, err := storage.PrepareKey(c.cfg.ResourcePrefix, key, opts.Recursive)
	if err != nil {
		return err
	}
	switch opts.ResourceVersion {
	case "0":
	case "":
		if err := c.waitUntilConsistent(ctx); err != nil {
			return c.cfg.Storage.GetList(ctx, key, opts, listObj)
		}
	default:
		rv, err := c.cfg.Versioner.ParseResourceVersion(opts.ResourceVersion)
		if err != nil {
			return err
		}
		if err := c.waitUntilFresh(ctx, rv, freshnessTimeout); err != nil {
			return err
		}
	}
	return c.list(preparedKey, opts, listObj)
}

func (c *Cache) servesList(opts storage.ListOptions) bool {
	switch {
	case !c.Ready(), opts.Predicate.Continue != "", opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		return false
	case opts.ResourceVersion == "0":
		return true
	default:
		return opts.Predicate.Limit == 0
	}
}

// list fills listObj with the matching cached objects and the cache's RV.
func (c *Cache) list(preparedKey string, opts storage.ListOptions, listObj runtime.Object) error {
	match := matcher(preparedKey, opts.Recursive, opts.Predicate)
	c.mu.RLock()
	rv := c.rv
	var items []*element
	if opts.Recursive {
		items, _ = c.store.list(preparedKey, "", 0, match)
	} else if e, ok := c.store.get(preparedKey); ok && match(e) {
		items = []*element{e}
	}
	c.mu.RUnlock()
	objs := make([]runtime.Object, 0, len(items))
	for _, e := range items {
		objs = append(objs, e.object)
	}
	if err := meta.SetList(listObj, objs); err != nil {
		return err
	}
	return c.cfg.Versioner.UpdateList(listObj, rv, "", nil)
}

// Get serves reads with a resourceVersion from the cache (after waiting for
// it); a Get without one is a quorum read from the storage, as upstream.
func (c *Cache) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	if opts.ResourceVersion == "" || !c.Ready() {
		return c.cfg.Storage.Get(ctx, key, opts, objPtr)
	}
	preparedKey, err := storage.PrepareKey(c.cfg.ResourcePrefix, key, false)
	if err != nil {
		return err
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if err := c.waitUntilFresh(ctx, rv, freshnessTimeout); err != nil {
		return err
	}
	c.mu.RLock()
	e, ok := c.store.get(preparedKey)
	current := c.rv
	c.mu.RUnlock()
	if !ok {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(objPtr)
		}
		return storage.NewKeyNotFoundError(key, int64(current))
	}
	reflect.ValueOf(objPtr).Elem().Set(reflect.ValueOf(e.object).Elem())
	return nil
}

// waitUntilConsistent waits until the cache has seen etcd's current
// revision, asking etcd for a progress notification every 100ms meanwhile,
// so an idle resource catches up too.
func (c *Cache) waitUntilConsistent(ctx context.Context) error {
	target, err := c.cfg.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	deadline := c.cfg.Clock.Now().Add(freshnessTimeout)
	for {
		if err := c.waitUntilFresh(ctx, target, progressRequestInterval); err == nil {
			return nil
		} else if !storage.IsTooLargeResourceVersion(err) || !c.cfg.Clock.Now().Before(deadline) {
			return err
		}
		if err := c.cfg.Storage.RequestWatchProgress(ctx); err != nil {
			return err
		}
	}
}
