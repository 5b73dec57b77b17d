package watchcache

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// Writes go to the storage. As upstream's cacher does, the cache hands the
// storage its own copy of the object as the suggested current state, in
// place of the caller's: a write then usually needs no read from etcd
// first (the storage retries with a fresh read if the suggestion is stale).

// Delete implements storage.Interface.
func (c *Cache) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, _ runtime.Object, opts storage.DeleteOptions,
) error {
	return c.cfg.Storage.Delete(ctx, key, out, preconditions, validateDeletion, c.suggestion(key), opts)
}

// GuaranteedUpdate implements storage.Interface.
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
