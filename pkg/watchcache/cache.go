package watchcache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	apiserverfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Defaults of Config.
const (
	DefaultHistoryWindow = 75 * time.Second
	DefaultMaxEvents     = 100 * 1024
	defaultRelistBackoff = time.Second
	// compactionPollInterval is how often the cache reads the storage's
	// compaction revision to drop the snapshots compacted away. Upstream
	// polls every 15s; the read is a mutex-guarded int, so the cache polls
	// every second, and a token it holds a snapshot for expires within a
	// second of etcd's compaction, as on the etcd path.
	compactionPollInterval = time.Second
)

// Config configures a Cache. Storage, ResourcePrefix, NewListFunc, KeyFunc and
// GetAttrsFunc are required; the rest have defaults.
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
	// WatchInitialized is called with a watch request's context once its
	// initial events are sent (the server passes API Priority and Fairness's
	// flowcontrol.WatchInitialized, which ends the watch's initial cost).
	WatchInitialized func(context.Context)
	// ProgressNotify asks etcd for progress notifications, so the cache's
	// resourceVersion advances while its resource is idle (KEP-1904).
	ProgressNotify bool
	// Snapshots keeps the state after every event in the history window, so
	// that LISTs at an exact resourceVersion and continuations of paged LISTs
	// are served from the cache (KEP-4988, upstream's ListFromCacheSnapshot).
	Snapshots bool
}

// Cache keeps a B-tree of one resource in sync with Storage through its own
// LIST+WATCH, with a history of recent events.
//
// Cache is a storage.Interface: what it does not serve yet goes to Storage.
type Cache struct {
	storage.Interface
	cfg Config

	// mu guards store, history, snaps, rv, ready, rvChanged and watchers.
	mu      sync.RWMutex
	store   *store
	history *history
	snaps   *snapshots // nil without Config.Snapshots
	rv      uint64
	ready   bool
	// rvChanged is closed (and replaced) whenever rv advances.
	rvChanged chan struct{}
	watchers  map[*watcher]struct{}
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
		Interface: c.Storage,
		cfg:       c,
		watchers:  map[*watcher]struct{}{},
		store:     newStore(c.IndexFields...),
		history:   newHistory(c.Clock, c.HistoryWindow, c.MaxEvents),
		rvChanged: make(chan struct{}),
	}
	if c.Snapshots {
		cache.snaps = newSnapshots()
	}
	if utilfeature.DefaultFeatureGate.Enabled(apiserverfeatures.SizeBasedListCostEstimate) {
		// The storage estimates object sizes for API Priority and Fairness
		// from the keys the cache lists, as upstream's cacher arranges.
		if err := c.Storage.EnableResourceSizeEstimation(cache.keys); err != nil {
			return nil, fmt.Errorf("watchcache: enabling resource size estimation: %w", err)
		}
	}
	return cache, nil
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

// Run keeps the cache in sync until ctx is done: it lists, then watches
// from the list's resourceVersion. When the watch breaks it watches again
// from the last resourceVersion seen, so watchers carry on without a gap;
// only when that is no longer possible (etcd compacted it) does it relist,
// which closes the watchers (they resume from their last resourceVersion,
// or get 410 Gone if it is older than the relist).
func (c *Cache) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.stopWatchersLocked()
	}()
	go c.every(ctx, time.Second, c.sendDueBookmarks)
	if c.snaps != nil {
		// Drop the snapshots etcd has compacted away: reads below the
		// compaction revision go to etcd, which answers 410.
		go c.every(ctx, compactionPollInterval, c.compactSnapshots)
	}
	logger := klog.FromContext(ctx).WithValues("prefix", c.cfg.ResourcePrefix)
	listed := false
	for ctx.Err() == nil {
		var err error
		if !listed {
			if err = c.relist(ctx); err == nil {
				listed = true
			}
		}
		if listed {
			err = c.watch(ctx, c.ResourceVersion())
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				listed = false
			}
		}
		if ctx.Err() != nil {
			return
		}
		logger.V(2).Info("Watch cache restarting its watch", "err", err, "relist", !listed)
		select {
		case <-ctx.Done():
		case <-c.cfg.Clock.After(defaultRelistBackoff):
		}
	}
}

// watch applies the storage's events after rv until the watch fails or ctx ends.
func (c *Cache) watch(ctx context.Context, rv uint64) error {
	w, err := c.cfg.Storage.Watch(ctx, c.cfg.ResourcePrefix, storage.ListOptions{
		ResourceVersion: fmt.Sprint(rv),
		Recursive:       true,
		Predicate:       storage.Everything,
		ProgressNotify:  c.cfg.ProgressNotify,
	})
	if err != nil {
		return fmt.Errorf("watching from %d: %w", rv, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("watch closed")
			}
			if err := c.apply(ev); err != nil {
				return err
			}
		}
	}
}

// every calls fn every interval on the cache's clock until ctx is done.
func (c *Cache) every(ctx context.Context, interval time.Duration, fn func()) {
	ticker := c.cfg.Clock.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			fn()
		}
	}
}

// compactSnapshots drops the snapshots before etcd's compaction revision.
func (c *Cache) compactSnapshots() {
	rev := c.cfg.Storage.CompactRevision()
	if rev <= 0 || c.snaps == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snaps.raiseFloor(uint64(rev))
	c.recordSnapshots()
}

// sendDueBookmarks offers a bookmark at the cache's resourceVersion to every
// watcher whose bookmark is due; a watcher drops it unless the cache has
// moved past what it has already seen. A full buffer just delays it.
func (c *Cache) sendDueBookmarks() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock.Now()
	var bookmark *event
	for w := range c.watchers {
		if w.nextBookmark.IsZero() || now.Before(w.nextBookmark) {
			continue
		}
		if bookmark == nil {
			bookmark = &event{typ: watch.Bookmark, rv: c.rv}
		}
		if w.offer(bookmark) {
			w.scheduleBookmark(now)
		}
	}
}

// relist replaces the store with a fresh LIST.
func (c *Cache) relist(ctx context.Context) (err error) {
	start := c.cfg.Clock.Now()
	defer func() { c.recordInitialization(start, err) }()
	list := c.cfg.NewListFunc()
	opts := storage.ListOptions{ResourceVersion: "", Recursive: true, Predicate: storage.Everything}
	if err := c.cfg.Storage.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
		return err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(listMeta.GetResourceVersion())
	if err != nil {
		return err
	}
	fresh := newStore(c.cfg.IndexFields...)
	err = meta.EachListItem(list, func(obj runtime.Object) error {
		e, err := c.newElement(obj)
		if err == nil {
			fresh.upsert(e)
		}
		return err
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store = fresh
	c.history.reset(rv)
	if c.snaps != nil {
		c.snaps.reset(rv, fresh)
		c.recordSnapshots()
	}
	c.stopWatchersLocked() // they resume from their last RV, in the window or with 410
	c.recordCapacity()
	c.ready = true
	c.setRVLocked(rv)
	return nil
}

func (c *Cache) newElement(obj runtime.Object) (*element, error) {
	key, err := c.cfg.KeyFunc(obj)
	if err != nil {
		return nil, err
	}
	l, f, err := c.cfg.GetAttrsFunc(obj)
	if err != nil {
		return nil, err
	}
	return &element{key: key, object: obj, labels: l, fields: f}, nil
}

// apply records one watch event from Storage. A bookmark (etcd progress
// notification) only advances the resourceVersion.
func (c *Cache) apply(ev watch.Event) error {
	switch ev.Type {
	case watch.Error:
		return fmt.Errorf("watch error: %w", apierrors.FromObject(ev.Object))
	case watch.Bookmark:
		rv, err := c.cfg.Versioner.ObjectResourceVersion(ev.Object)
		if err != nil {
			return err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if rv > c.rv { // a progress RV below what was seen is a no-op (etcd#15220)
			c.setRVLocked(rv)
		}
		return nil
	}
	e, err := c.newElement(ev.Object)
	if err != nil {
		return err
	}
	rv, err := c.cfg.Versioner.ObjectResourceVersion(ev.Object)
	if err != nil {
		return err
	}
	c.recordEventReceived()
	c.mu.Lock()
	defer c.mu.Unlock()
	var prev *element
	if ev.Type == watch.Deleted {
		prev, _ = c.store.remove(e.key)
	} else {
		prev, _ = c.store.upsert(e)
	}
	recorded := &event{typ: ev.Type, rv: rv, recordTime: c.cfg.Clock.Now(), obj: e, prevObj: prev, cached: newCachingObject(e.object)}
	c.history.add(recorded)
	if c.snaps != nil {
		c.snaps.add(rv, c.store)
		c.snaps.raiseFloor(c.history.startRV) // snapshots live as long as the events
		c.recordSnapshots()
	}
	c.setRVLocked(rv)
	c.dispatchLocked(recorded)
	return nil
}

func (c *Cache) setRVLocked(rv uint64) {
	c.rv = rv
	c.recordResourceVersion(rv)
	close(c.rvChanged)
	c.rvChanged = make(chan struct{})
}

// ResourceVersion is the newest resourceVersion the cache has seen.
func (c *Cache) ResourceVersion() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
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

// ReadinessCheck implements storage.Interface: not ready until the cache has
// listed its resource (the server's /readyz reports it).
func (c *Cache) ReadinessCheck() error {
	if !c.Ready() {
		return storage.ErrStorageNotReady
	}
	return nil
}

// Ready reports whether the cache has listed its resource.
func (c *Cache) Ready() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// waitUntilFresh blocks until the cache has seen rv, for at most timeout.
func (c *Cache) waitUntilFresh(ctx context.Context, rv uint64, timeout time.Duration) error {
	deadline := c.cfg.Clock.After(timeout)
	for {
		c.mu.RLock()
		current, changed, ready := c.rv, c.rvChanged, c.ready
		c.mu.RUnlock()
		if ready && current >= rv {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return storage.NewTooLargeResourceVersionError(rv, current, 1)
		}
	}
}
