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
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/clock"
)

// Defaults of Config.
const (
	DefaultHistoryWindow = 75 * time.Second
	DefaultMaxEvents     = 100 * 1024
)

// Config configures a Cache. Storage, ResourcePrefix, NewListFunc, KeyFunc and
// GetAttrsFunc are required; the rest have defaults. The cache reads no
// feature gate: the switches below are set by its caller.
type Config struct {
	// Storage is the store the cache lists and watches (upstream's etcd3 store).
	Storage storage.Interface
	// ResourcePrefix is the key prefix of the resource, e.g. "/configmaps".
	ResourcePrefix string
	NewListFunc    func() runtime.Object
	// NewFunc makes the empty objects bookmarks carry; by default, a new
	// item of NewListFunc's list.
	NewFunc      func() runtime.Object
	KeyFunc      func(runtime.Object) (string, error)
	GetAttrsFunc storage.AttrFunc
	// IndexFields are fields (of GetAttrsFunc's field set) the cache indexes:
	// a LIST whose field selector pins one of them reads only the matching objects.
	IndexFields []string
	// GroupResource labels the cache's metrics.
	GroupResource schema.GroupResource
	Versioner     storage.Versioner
	Clock         clock.WithTicker
	// HistoryWindow is how long events stay servable to watches (at least 75s, as upstream).
	HistoryWindow time.Duration
	// MaxEvents caps the history whatever the window.
	MaxEvents int
	// WatchBufferSize is how many events dispatch queues for a watcher;
	// one that falls further behind catches up from the history (0: 100).
	// Tests set it low to make a watcher lag after a few writes.
	WatchBufferSize int
	// WatchInitialized is called with a watch request's context once its
	// initial events are sent (the server passes API Priority and Fairness's
	// flowcontrol.WatchInitialized, which ends the watch's initial cost).
	WatchInitialized func(context.Context)
	// Encodings, if set, is told which cached objects fill each LIST the
	// cache serves, so the response encoder can reuse their encodings.
	Encodings *Encodings

	// ProgressNotify asks etcd for progress notifications, so the cache's
	// resourceVersion advances while its resource is idle (KEP-1904).
	ProgressNotify bool
	// ResumeFromStorage serves a watch from a resourceVersion older than
	// the cache's history from the storage (etcd's own history) instead of
	// answering 410, so that a client resumes from any resourceVersion etcd
	// has not compacted, after a restart or on another instance (KEP-1904,
	// beyond upstream, whose cache answers 410 and makes the client relist).
	ResumeFromStorage bool
	// ShutdownBookmarks: on Shutdown, every watcher that allows bookmarks
	// gets one at a freshly progressed resourceVersion before its stream
	// ends (KEP-1904).
	ShutdownBookmarks bool
	// ConsistencyCheckPeriod, if positive, is how often the cache compares
	// its newest state with the storage's at the same resourceVersion
	// (upstream's DetectCacheInconsistency; see consistency.go).
	ConsistencyCheckPeriod time.Duration
	// PanicOnInconsistency makes a failed consistency check panic instead
	// of relisting: for test suites, as upstream's
	// KUBE_WATCHCACHE_CONSISTENCY_CHECKER.
	PanicOnInconsistency bool
	// Snapshots keeps the state after every event in the history window, so
	// that LISTs at an exact resourceVersion and continuations of paged LISTs
	// are served from the cache (KEP-4988, upstream's ListFromCacheSnapshot).
	Snapshots bool
	// EstimateSizes lets the storage estimate object sizes for API Priority
	// and Fairness from the keys the cache lists (upstream's
	// SizeBasedListCostEstimate).
	EstimateSizes bool
}

// Cache keeps a B-tree of one resource in sync with Storage through its own
// LIST+WATCH, with a history of recent events, and serves reads and watches
// from it. It implements storage.Interface method by method (delegate.go
// lists which methods go to Storage), so a method upstream adds fails the
// build here instead of bypassing the cache.
type Cache struct {
	cfg      Config
	progress *progressRequester
	// shutdownProgressTimeout bounds Shutdown's wait before its final
	// bookmarks (a variable for tests).
	shutdownProgressTimeout time.Duration

	// mu guards store, history, snaps, rv, ready, inconsistent, rvChanged,
	// watchers and shuttingDown.
	mu      sync.RWMutex
	store   *store
	history *history
	snaps   *snapshots // nil without Config.Snapshots
	rv      uint64
	ready   bool
	// inconsistent: a consistency check failed and the relist that follows
	// has not replaced the store yet; exact and continue reads go to the storage.
	inconsistent bool
	// relistRequested asks follow to relist (after a failed consistency check).
	relistRequested chan struct{}
	// rvChanged is closed (and replaced) whenever rv advances.
	rvChanged chan struct{}
	watchers  watcherSet
	// shuttingDown: Shutdown (or the end of Run) has ended the watchers;
	// new watches are refused.
	shuttingDown bool

	// resumed are the watches from before the history (ResumeFromStorage).
	// It has its own lock, but is added to under mu with running.Add, and
	// shut down under mu with shuttingDown set: so it refuses exactly when
	// shuttingDown is set, and no watch is counted after Run began to join.
	resumed Watches[*resumedWatch]
	// running counts the watchers' goroutines, which Run joins.
	running sync.WaitGroup
}

var _ storage.Interface = (*Cache)(nil)

// New validates c, fills in defaults and returns a cache that is not ready
// until Run has listed the resource.
func New(c Config) (*Cache, error) {
	switch {
	case c.Storage == nil:
		return nil, errors.New("watchcache: Config.Storage is required")
	case c.ResourcePrefix == "":
		return nil, errors.New("watchcache: Config.ResourcePrefix is required")
	case c.NewListFunc == nil || c.KeyFunc == nil || c.GetAttrsFunc == nil:
		return nil, errors.New("watchcache: Config.NewListFunc, KeyFunc and GetAttrsFunc are required")
	}
	if c.HistoryWindow == 0 {
		c.HistoryWindow = DefaultHistoryWindow
	}
	if c.HistoryWindow < DefaultHistoryWindow {
		return nil, fmt.Errorf("watchcache: Config.HistoryWindow %s must not be below %s", c.HistoryWindow, DefaultHistoryWindow)
	}
	if c.MaxEvents <= 0 {
		c.MaxEvents = DefaultMaxEvents
	}
	if c.WatchBufferSize <= 0 {
		c.WatchBufferSize = defaultWatchBufferSize
	}
	if c.NewFunc == nil {
		newFunc, err := itemFunc(c.NewListFunc())
		if err != nil {
			return nil, fmt.Errorf("watchcache: Config.NewFunc: %w", err)
		}
		c.NewFunc = newFunc
	}
	if c.Versioner == nil {
		c.Versioner = storage.APIObjectVersioner{}
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	registerMetrics()
	cache := &Cache{
		cfg:                     c,
		progress:                newProgressRequester(c.Storage.RequestWatchProgress, c.Clock),
		shutdownProgressTimeout: shutdownProgressTimeout,
		watchers:                newWatcherSet(c.IndexFields),
		store:                   newStore(c.IndexFields...),
		history:                 newHistory(c.Clock, c.HistoryWindow, minHistory, c.MaxEvents),
		rvChanged:               make(chan struct{}),
		relistRequested:         make(chan struct{}, 1),
	}
	if c.Snapshots {
		cache.snaps = newSnapshots()
	}
	if c.EstimateSizes {
		if err := c.Storage.EnableResourceSizeEstimation(cache.keys); err != nil {
			return nil, fmt.Errorf("watchcache: enabling resource size estimation: %w", err)
		}
	}
	return cache, nil
}

// Run keeps the cache in sync with its storage until ctx is done (follow.go),
// and runs the progress requester (freshness.go) and the ticker that sends
// due bookmarks and drops compacted snapshots (bookmarks.go). It returns
// once every goroutine it started, and every watcher's, has ended.
func (c *Cache) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	var loops sync.WaitGroup
	for _, loop := range []func(context.Context){c.progress.run, c.tick, c.checkConsistencyEvery} {
		loops.Go(func() {
			defer utilruntime.HandleCrash()
			loop(ctx)
		})
	}
	c.follow(ctx)
	loops.Wait()
	c.mu.Lock()
	c.shuttingDown = true
	c.stopWatchersLocked()
	for _, r := range c.resumed.Shutdown() {
		r.Stop()
	}
	c.mu.Unlock()
	c.running.Wait()
}

// ResourceVersion is the newest resourceVersion the cache has seen.
func (c *Cache) ResourceVersion() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// Ready reports whether the cache has listed its resource.
func (c *Cache) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// ReadinessCheck implements storage.Interface: not ready until the cache has
// listed its resource (the server's /readyz reports it).
func (c *Cache) ReadinessCheck() error {
	if !c.Ready() {
		return storage.ErrStorageNotReady
	}
	return nil
}

// keys lists the keys of every object, once the cache is as fresh as etcd.
func (c *Cache) keys(ctx context.Context) ([]string, error) {
	if err := c.waitUntilConsistent(ctx); err != nil {
		return nil, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, c.store.len())
	c.store.ascend("", "", func(e *element) bool {
		keys = append(keys, e.key)
		return true
	})
	return keys, nil
}

// itemFunc returns a function making new items of list's kind.
func itemFunc(list runtime.Object) (func() runtime.Object, error) {
	items, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, err
	}
	t := reflect.TypeOf(items).Elem().Elem()
	if _, ok := reflect.New(t).Interface().(runtime.Object); !ok {
		return nil, fmt.Errorf("%s is not a runtime.Object", t)
	}
	return func() runtime.Object { return reflect.New(t).Interface().(runtime.Object) }, nil
}
