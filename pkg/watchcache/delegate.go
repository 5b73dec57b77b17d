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

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// Where each storage.Interface method of Cache is served, as upstream's
// CacheDelegator splits them:
//
//	GetList                       cache, snapshot or storage, by request (list.go)
//	Get                           cache with a resourceVersion, else storage (list.go)
//	Watch                         cache once ready, else storage (serve.go)
//	ReadinessCheck                cache (cache.go)
//	Create, Delete,
//	GuaranteedUpdate              storage, with the cached object as suggestion (below)
//	Versioner, Stats,
//	RequestWatchProgress,
//	GetCurrentResourceVersion,
//	EnableResourceSizeEstimation,
//	CompactRevision               storage (below)
//
// Every method is written out, so a method upstream adds to the interface
// fails to build here rather than silently bypassing the cache.

// Versioner implements storage.Interface.
func (c *Cache) Versioner() storage.Versioner { return c.cfg.Storage.Versioner() }

// Create implements storage.Interface: writes go to the storage.
func (c *Cache) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return c.cfg.Storage.Create(ctx, key, obj, out, ttl)
}

// Delete implements storage.Interface. As upstream's cacher does, the cache
// hands the storage its own copy of the object as the suggested current
// state, in place of the caller's: a write then usually needs no read from
// etcd first (the storage retries with a fresh read if it is stale).
func (c *Cache) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, _ runtime.Object, opts storage.DeleteOptions,
) error {
	return c.cfg.Storage.Delete(ctx, key, out, preconditions, validateDeletion, c.suggestion(key), opts)
}

// GuaranteedUpdate implements storage.Interface, with the cached object as
// the suggested current state, as Delete.
func (c *Cache) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, _ runtime.Object,
) error {
	return c.cfg.Storage.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, c.suggestion(key))
}

// suggestion is a deep copy of the cached object at key (the storage sets
// its resourceVersion), or nil if the cache does not hold it.
func (c *Cache) suggestion(key string) runtime.Object {
	if !c.Ready() {
		return nil
	}
	c.mu.RLock()
	e, ok := c.store.get(key)
	c.mu.RUnlock()
	if !ok {
		return nil
	}
	return e.object.DeepCopyObject()
}

// Stats implements storage.Interface: the storage counts (upstream's too).
func (c *Cache) Stats(ctx context.Context) (storage.Stats, error) { return c.cfg.Storage.Stats(ctx) }

// RequestWatchProgress implements storage.Interface.
func (c *Cache) RequestWatchProgress(ctx context.Context) error {
	return c.cfg.Storage.RequestWatchProgress(ctx)
}

// GetCurrentResourceVersion implements storage.Interface: etcd's current revision.
func (c *Cache) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	return c.cfg.Storage.GetCurrentResourceVersion(ctx)
}

// EnableResourceSizeEstimation implements storage.Interface. The cache
// enables it itself with its own key lister (Config.EstimateSizes); the
// storage refuses a second one.
func (c *Cache) EnableResourceSizeEstimation(keys storage.KeysFunc) error {
	return c.cfg.Storage.EnableResourceSizeEstimation(keys)
}

// CompactRevision implements storage.Interface: the compaction revision the
// storage has seen (the cache drops its snapshots below it).
func (c *Cache) CompactRevision() int64 { return c.cfg.Storage.CompactRevision() }
