package watchcache

import (
	"context"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
)

// Upstream's timeouts: how long a read waits for the cache to reach a
// resourceVersion, and how often it asks etcd for progress meanwhile.
const (
	freshnessTimeout        = 3 * time.Second
	progressRequestInterval = 100 * time.Millisecond
)

// GetList serves LISTs from the cache as upstream's cache does without
// snapshots (k8s.io/apiserver's delegator, ListFromCacheSnapshot off):
//
//   - resourceVersion "0": any state; limit ignored (whole list, no token).
//   - resourceVersionMatch=NotOlderThan, or N without a match: the current
//     state once the cache has seen N (504 after 3 s); with limit (and
//     NotOlderThan) its first page and a continue token at the cache's RV.
//   - "": a consistent read: etcd's current revision, then waiting for it
//     (etcd serves it if the cache does not catch up); with limit, a page.
//
// Exact reads, N with limit and no match, and continuations go to the
// storage (the token's revision is exact); so does everything while the
// cache is not ready.
func (c *Cache) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	preparedKey, err := storage.PrepareKey(c.cfg.ResourcePrefix, key, opts.Recursive)
	if err != nil {
		return err
	}
	if _, _, err := storage.ValidateListOptions(preparedKey, c.cfg.Versioner, opts); err != nil {
		return err
	}
	if !c.servesList(opts) {
		return c.cfg.Storage.GetList(ctx, key, opts, listObj)
	}
	switch opts.ResourceVersion {
	case "0":
	case "":
		if err := c.waitUntilConsistent(ctx); err != nil {
			err = c.cfg.Storage.GetList(ctx, key, opts, listObj)
			c.recordConsistentRead(err == nil, true)
			return err
		}
		c.recordConsistentRead(true, false)
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

// servesList is upstream's shouldDelegateList, negated, without snapshots.
func (c *Cache) servesList(opts storage.ListOptions) bool {
	switch {
	case !c.Ready():
		return false
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		return false
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchNotOlderThan:
		return true
	case opts.Predicate.Continue != "":
		return false
	case opts.Predicate.Limit > 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0":
		return false // legacy exact read of a first page
	default:
		return true
	}
}

// list fills listObj with the matching cached objects, at most limit of
// them (no limit with resourceVersion "0"), with the cache's RV and, when
// more remain, a continue token in the etcd path's format.
func (c *Cache) list(preparedKey string, opts storage.ListOptions, listObj runtime.Object) error {
	match := matcher(preparedKey, opts.Recursive, opts.Predicate)
	limit := opts.Predicate.Limit
	if opts.ResourceVersion == "0" {
		limit = 0
	}
	c.mu.RLock()
	rv := c.rv
	var items []*element
	fetched, index, hasMore := 0, "", false
	var total int // elements under the prefix, for remainingItemCount
	counted := func(e *element) bool {
		fetched++
		return match(e)
	}
	switch field, value, indexed := c.indexedSelector(opts.Predicate); {
	case !opts.Recursive:
		if e, ok := c.store.get(preparedKey); ok && counted(e) {
			items = []*element{e}
		}
	case indexed && limit == 0:
		index = field
		candidates, _ := c.store.indexed(field, value)
		for _, e := range candidates {
			if strings.HasPrefix(e.key, preparedKey) && counted(e) {
				items = append(items, e)
			}
		}
	default:
		items, hasMore = c.store.list(preparedKey, "", int(limit), counted)
		if hasMore && opts.Predicate.Empty() {
			total = c.store.count(preparedKey, "")
		}
	}
	c.mu.RUnlock()
	c.recordList(index, fetched, len(items))
	objs := make([]runtime.Object, 0, len(items))
	for _, e := range items {
		objs = append(objs, e.object)
	}
	if err := meta.SetList(listObj, objs); err != nil {
		return err
	}
	lastKey := ""
	if len(items) > 0 {
		lastKey = items[len(items)-1].key
	}
	continueValue, remaining, err := storage.PrepareContinueToken(lastKey, preparedKey, int64(rv), int64(total), hasMore, opts)
	if err != nil {
		return err
	}
	return c.cfg.Versioner.UpdateList(listObj, rv, continueValue, remaining)
}

// indexedSelector returns the indexed field, and its value, that pred's
// field selector pins, if any.
func (c *Cache) indexedSelector(pred storage.SelectionPredicate) (field, value string, ok bool) {
	if pred.Field == nil {
		return "", "", false
	}
	for _, field := range c.cfg.IndexFields {
		if value, ok := pred.Field.RequiresExactMatch(field); ok {
			return field, value, true
		}
	}
	return "", "", false
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
// revision, asking etcd for a progress notification at once and every
// 100ms meanwhile, so an idle resource catches up too.
func (c *Cache) waitUntilConsistent(ctx context.Context) error {
	target, err := c.cfg.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	deadline := c.cfg.Clock.Now().Add(freshnessTimeout)
	for {
		if c.ResourceVersion() >= target && c.Ready() {
			return nil
		}
		// Behind: ask etcd where the cache's watch stands at once, so an
		// idle resource catches up in a round trip, then every 100ms. A
		// failed request (the watch is being re-established) only means
		// waiting for the next one, as upstream's progress requester does.
		if err := c.cfg.Storage.RequestWatchProgress(ctx); err != nil {
			klog.FromContext(ctx).V(4).Info("Watch cache progress request failed", "prefix", c.cfg.ResourcePrefix, "err", err)
		}
		err := c.waitUntilFresh(ctx, target, progressRequestInterval)
		if err == nil || !storage.IsTooLargeResourceVersion(err) || !c.cfg.Clock.Now().Before(deadline) {
			return err
		}
	}
}
