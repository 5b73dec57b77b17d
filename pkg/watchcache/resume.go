package watchcache

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// A cache's history starts where the cache listed: after a restart, or on
// an instance that started later, a client's resourceVersion can be older.
// Upstream's cache answers 410 and the client relists everything. With
// Config.ResumeFromStorage the cache hands such a watch to the storage,
// which serves it from etcd's own history, as the etcd path does: the
// client gets the events it missed, or 410 once etcd has compacted them.
// The watch stays on etcd until it ends (client-go re-watches every 5 to
// 10 minutes, from a recent resourceVersion the cache serves). Starting
// the cache costs nothing more: no history is replayed. While etcd
// replays the watch's backlog, it shares the cache's gRPC stream and holds
// back the cache's progress requests (etcd answers them once every watch
// on the stream has caught up): a consistent read may wait that long.

// watchStorage serves a watch from the storage and tracks it, so that
// Shutdown ends it too.
func (c *Cache) watchStorage(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := c.cfg.Storage.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shuttingDown {
		w.Stop()
		return nil, errShuttingDown
	}
	sw := &storageWatch{Interface: w, cache: c}
	c.storageWatches[sw] = struct{}{}
	c.recordResumedFromStorage()
	return sw, nil
}

// stopStorageWatchesLocked ends the watches the storage serves.
func (c *Cache) stopStorageWatchesLocked() {
	for w := range c.storageWatches {
		delete(c.storageWatches, w)
		w.Interface.Stop()
	}
}

// storageWatch is a watch the storage serves; it forgets itself when stopped.
type storageWatch struct {
	watch.Interface
	cache *Cache
	once  sync.Once
}

func (w *storageWatch) Stop() {
	w.once.Do(func() {
		w.Interface.Stop()
		w.cache.mu.Lock()
		delete(w.cache.storageWatches, w)
		w.cache.mu.Unlock()
	})
}
