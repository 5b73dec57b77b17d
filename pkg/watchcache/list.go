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
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// GetList serves LISTs as upstream's delegator decides
// (k8s.io/apiserver's delegator.ShouldDelegateList and the cacher behind
// it), with snapshots when Config.Snapshots is set (ListFromCacheSnapshot):
//
//   - resourceVersion "0": the cache's state; limit ignored (whole list, no token).
//   - resourceVersionMatch=NotOlderThan, or N without a limit: the cache's
//     state once it has seen N (504 after 3 s); a page and a token at the
//     cache's RV when there is a limit.
//   - "": a consistent read: etcd's current revision, then the cache's
//     state once it has seen it (etcd serves it if the cache does not catch
//     up); a page when there is a limit.
//   - resourceVersionMatch=Exact, N with a limit, and continue tokens: the
//     state at exactly that RV, from the newest snapshot at or before it;
//     etcd at that RV when there is none (it answers 410 if compacted) or
//     without snapshots. A token from etcd's 410 (RV -1) continues at the
//     cache's state, as a consistent read.
//
// While the cache is not ready, a page without selectors goes to the
// storage and any other LIST waits for the cache (429 after 3 s). Tokens
// have the etcd path's format, so either path continues the other's.
func (c *Cache) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	preparedKey, err := storage.PrepareKey(c.cfg.ResourcePrefix, key, opts.Recursive)
	if err != nil {
		return err
	}
	if _, _, err := storage.ValidateListOptions(preparedKey, c.cfg.Versioner, opts); err != nil {
		return err
	}
	if !c.Ready() && !(opts.Predicate.Limit > 0 && opts.Predicate.Empty()) {
		// As upstream, only a page without selectors goes to etcd while the
		// cache is not ready (route); other LISTs wait for it, up to 3 s,
		// then get 429 (upstream answers 429 at once).
		if err := c.waitReady(ctx); err != nil {
			return err
		}
	}
	r, err := c.route(preparedKey, opts)
	if err != nil {
		return err
	}
	switch r.source {
	case fromSnapshot:
		if err := c.waitWithProgress(ctx, r.rv); err != nil {
			c.recordListRoute(fromSnapshot, r.reason)
			return err
		}
		c.mu.RLock()
		snap, ok := c.snaps.at(r.rv)
		c.mu.RUnlock()
		if ok {
			c.recordListRoute(fromSnapshot, r.reason)
			return c.writeList(listObj, pageOf(snap, preparedKey, r.startKey, opts), r.rv, preparedKey, opts)
		}
		// Dropped while waiting: upstream's delegator retries on etcd too.
		r = listRoute{source: fromEtcd, reason: reasonNoSnapshot}
	case fromCache:
		if r.consistent {
			if err := c.waitUntilConsistent(ctx); err != nil {
				c.recordListRoute(fromEtcd, reasonConsistentReadTimeout)
				err = c.cfg.Storage.GetList(ctx, key, opts, listObj)
				c.recordConsistentRead(err == nil, true)
				return err
			}
			c.recordConsistentRead(true, false)
		} else if err := c.waitWithProgress(ctx, r.rv); err != nil {
			c.recordListRoute(fromCache, r.reason)
			return err
		}
		c.recordListRoute(fromCache, r.reason)
		return c.listLatest(listObj, preparedKey, r.startKey, opts)
	}
	c.recordListRoute(fromEtcd, r.reason)
	return c.cfg.Storage.GetList(ctx, key, opts, listObj)
}

// listSource is where a LIST is served from.
type listSource string

const (
	fromCache    listSource = "cache"    // the cache's current state
	fromSnapshot listSource = "snapshot" // the state at an exact resourceVersion
	fromEtcd     listSource = "etcd"     // delegated to the storage
)

// Reasons, the label miniapiserver_watch_cache_list_requests_total gives.
const (
	reasonConsistent     = "consistent"     // RV unset
	reasonNotOlderThan   = "not_older_than" // RV N without a limit, or NotOlderThan
	reasonAny            = "any"            // RV "0"
	reasonExact          = "exact"          // Exact, or N with a limit
	reasonContinue       = "continue"       // a continue token at its RV
	reasonContinueLatest = "continue_latest"
	// Why a LIST went to etcd.
	reasonNotReady              = "not_ready"
	reasonSnapshotsDisabled     = "snapshots_disabled"
	reasonInconsistent          = "inconsistent"
	reasonNotRecursive          = "not_recursive"
	reasonNoSnapshot            = "no_snapshot"
	reasonConsistentReadTimeout = "consistent_read_timeout"
)

// listRoute is where one LIST is served from, and why.
type listRoute struct {
	source listSource
	reason string
	// rv is, from a snapshot, the RV to read at; from the cache, the RV to wait for.
	rv uint64
	// consistent: from the cache, after waiting for etcd's current revision.
	consistent bool
	// startKey is where a continuation starts (inclusive).
	startKey string
}

// route is upstream's ShouldDelegateList with the cacher's helpers
// (ShouldDelegateExactRV, ShouldDelegateContinue), negated. opts is valid.
func (c *Cache) route(preparedKey string, opts storage.ListOptions) (listRoute, error) {
	if !c.Ready() {
		return listRoute{source: fromEtcd, reason: reasonNotReady}, nil
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return listRoute{}, err
	}
	switch {
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact:
		return c.routeExact(rv, opts.Recursive, "", reasonExact), nil
	case opts.ResourceVersionMatch == metav1.ResourceVersionMatchNotOlderThan:
	case opts.Predicate.Continue != "":
		if c.snaps == nil || !opts.Recursive {
			return c.routeExact(0, opts.Recursive, "", reasonContinue), nil
		}
		startKey, continueRV, err := storage.DecodeContinue(opts.Predicate.Continue, preparedKey)
		if err != nil {
			return listRoute{}, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if continueRV > 0 {
			return c.routeExact(uint64(continueRV), true, startKey, reasonContinue), nil
		}
		// etcd's 410 hands out tokens at RV -1: continue at the latest state.
		return listRoute{source: fromCache, reason: reasonContinueLatest, consistent: true, startKey: startKey}, nil
	case opts.Predicate.Limit > 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0":
		return c.routeExact(rv, opts.Recursive, "", reasonExact), nil
	case opts.ResourceVersion == "":
		return listRoute{source: fromCache, reason: reasonConsistent, consistent: true}, nil
	}
	if opts.ResourceVersion == "0" {
		return listRoute{source: fromCache, reason: reasonAny}, nil
	}
	return listRoute{source: fromCache, reason: reasonNotOlderThan, rv: rv}, nil
}

// routeExact serves a read at exactly rv from a snapshot if there is one,
// or will be (rv is newer than the cache: it waits for it, as upstream's
// cache does when etcd supports consistent reads).
func (c *Cache) routeExact(rv uint64, recursive bool, startKey, reason string) listRoute {
	switch {
	case c.snaps == nil:
		return listRoute{source: fromEtcd, reason: reasonSnapshotsDisabled}
	case !recursive:
		return listRoute{source: fromEtcd, reason: reasonNotRecursive}
	}
	c.mu.RLock()
	inconsistent := c.inconsistent
	_, ok := c.snaps.at(rv)
	future := rv > c.rv
	c.mu.RUnlock()
	if inconsistent {
		return listRoute{source: fromEtcd, reason: reasonInconsistent}
	}
	if !ok && !future {
		return listRoute{source: fromEtcd, reason: reasonNoSnapshot}
	}
	return listRoute{source: fromSnapshot, reason: reason, rv: rv, startKey: startKey}
}

// listLimit is upstream's computeListLimit: resourceVersion "0" ignores limit.
func listLimit(opts storage.ListOptions) int {
	if opts.Predicate.Limit <= 0 || opts.ResourceVersion == "0" {
		return 0
	}
	return int(opts.Predicate.Limit)
}

// page is what one LIST read from a store.
type page struct {
	items   []*element
	hasMore bool // elements remain after the last item: the list needs a token
	total   int  // elements from the start key on, for remainingItemCount
	fetched int  // elements the read looked at
	index   string
}

// pageOf reads one page of the elements under preparedKey from startKey on.
func pageOf(src *store, preparedKey, startKey string, opts storage.ListOptions) page {
	match := matcher(preparedKey, opts.Recursive, opts.Predicate)
	var p page
	counted := func(e *element) bool {
		p.fetched++
		return match(e)
	}
	if !opts.Recursive {
		if e, ok := src.get(preparedKey); ok && counted(e) {
			p.items = []*element{e}
		}
		return p
	}
	p.items, p.hasMore = src.list(preparedKey, startKey, listLimit(opts), counted)
	if p.hasMore && opts.Predicate.Empty() {
		p.total = src.count(preparedKey, startKey)
		// Every element up to the last item was returned: the next page's count.
		src.counts.put(preparedKey, p.items[len(p.items)-1].key+"\x00", p.total-len(p.items))
	}
	return p
}

// listLatest lists the cache's current state: from its index when the field
// selector pins an indexed field and there is no limit, else from its
// newest snapshot (read without holding the lock) or, without snapshots,
// from the live store.
func (c *Cache) listLatest(listObj runtime.Object, preparedKey, startKey string, opts storage.ListOptions) error {
	var p page
	c.mu.RLock()
	rv := c.rv
	field, value, indexed := c.indexedSelector(opts.Predicate)
	switch latest, haveSnapshot := c.latestSnapshot(); {
	case indexed && opts.Recursive && startKey == "" && listLimit(opts) == 0:
		candidates, _ := c.store.indexed(field, value)
		c.mu.RUnlock()
		match := matcher(preparedKey, opts.Recursive, opts.Predicate)
		p.index, p.fetched = field, len(candidates)
		for _, e := range candidates {
			if match(e) {
				p.items = append(p.items, e)
			}
		}
	case haveSnapshot:
		c.mu.RUnlock()
		p = pageOf(latest, preparedKey, startKey, opts)
	default:
		p = pageOf(c.store, preparedKey, startKey, opts)
		c.mu.RUnlock()
	}
	return c.writeList(listObj, p, rv, preparedKey, opts)
}

// latestSnapshot returns the newest snapshot, which holds the live state; c.mu is held.
func (c *Cache) latestSnapshot() (*store, bool) {
	if c.snaps == nil {
		return nil, false
	}
	latest, ok := c.snaps.latest()
	return latest.store, ok
}

// writeList fills listObj with p's items at rv and, when more remain, a
// continue token in the etcd path's format.
func (c *Cache) writeList(listObj runtime.Object, p page, rv uint64, preparedKey string, opts storage.ListOptions) error {
	c.recordList(p.index, p.fetched, len(p.items))
	objs := make([]runtime.Object, 0, len(p.items))
	for _, e := range p.items {
		objs = append(objs, e.object)
	}
	if err := meta.SetList(listObj, objs); err != nil {
		return err
	}
	c.cfg.Encodings.remember(listObj, p.items) // for the response encoder
	lastKey := ""
	if len(p.items) > 0 {
		lastKey = p.items[len(p.items)-1].key
	}
	continueValue, remaining, err := storage.PrepareContinueToken(lastKey, preparedKey, int64(rv), int64(p.total), p.hasMore, opts)
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
	if err := c.waitWithProgress(ctx, rv); err != nil {
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
