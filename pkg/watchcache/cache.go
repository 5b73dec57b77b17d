package watchcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Defaults of Config.
const (
	DefaultHistoryWindow = 75 * time.Second
	DefaultMaxEvents     = 100 * 1024
	defaultRelistBackoff = time.Second
)

// Config configures a Cache. Storage, ResourcePrefix, NewListFunc, KeyFunc and
// GetAttrsFunc are required; the rest have defaults.
type Config struct {
	// Storage is the store the cache lists and watches (upstream's etcd3 store).
	Storage storage.Interface
	// ResourcePrefix is the key prefix of the resource, e.g. "/configmaps".
	ResourcePrefix string
	NewListFunc    func() runtime.Object
	KeyFunc        func(runtime.Object) (string, error)
	GetAttrsFunc   storage.AttrFunc
	Versioner      storage.Versioner
	Clock          clock.Clock
	// HistoryWindow is how long events stay servable to watches (at least 75s, as upstream).
	HistoryWindow time.Duration
	// MaxEvents caps the history whatever the window.
	MaxEvents int
	// ProgressNotify asks etcd for progress notifications, so the cache's
	// resourceVersion advances while its resource is idle (KEP-1904).
	ProgressNotify bool
}

// Cache keeps a B-tree of one resource in sync with Storage through its own
// LIST+WATCH, with a history of recent events.
//
// Cache is a storage.Interface: what it does not serve yet goes to Storage.
type Cache struct {
	storage.Interface
	cfg Config

	// mu guards store, history, rv, ready, rvChanged and watchers.
	mu      sync.RWMutex
	store   *store
	history *history
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
	if c.Versioner == nil {
		c.Versioner = storage.APIObjectVersioner{}
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	return &Cache{
		Interface: c.Storage,
		cfg:       c,
		watchers:  map[*watcher]struct{}{},
		store:     newStore(),
		history:   newHistory(c.Clock, c.HistoryWindow, c.MaxEvents),
		rvChanged: make(chan struct{}),
	}, nil
}

// Run keeps the cache in sync until ctx is done: it lists, then watches from
// the list's resourceVersion, and relists after any watch failure.
func (c *Cache) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.stopWatchersLocked()
	}()
	logger := klog.FromContext(ctx).WithValues("prefix", c.cfg.ResourcePrefix)
	for ctx.Err() == nil {
		if err := c.listAndWatch(ctx); err != nil && ctx.Err() == nil {
			logger.V(2).Info("Watch cache relisting", "err", err)
			select {
			case <-ctx.Done():
			case <-c.cfg.Clock.After(defaultRelistBackoff):
			}
		}
	}
}

// listAndWatch lists the resource into a fresh store and applies watch
// events until the watch fails or ctx ends.
func (c *Cache) listAndWatch(ctx context.Context) error {
	rv, err := c.relist(ctx)
	if err != nil {
		return fmt.Errorf("listing: %w", err)
	}
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

// relist replaces the store with a fresh LIST and returns its resourceVersion.
func (c *Cache) relist(ctx context.Context) (uint64, error) {
	list := c.cfg.NewListFunc()
	opts := storage.ListOptions{ResourceVersion: "", Recursive: true, Predicate: storage.Everything}
	if err := c.cfg.Storage.GetList(ctx, c.cfg.ResourcePrefix, opts, list); err != nil {
		return 0, err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return 0, err
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(listMeta.GetResourceVersion())
	if err != nil {
		return 0, err
	}
	fresh := newStore()
	err = meta.EachListItem(list, func(obj runtime.Object) error {
		e, err := c.newElement(obj)
		if err == nil {
			fresh.upsert(e)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store = fresh
	c.history.reset(rv)
	c.stopWatchersLocked() // they resume from their last RV, in the window or with 410
	c.ready = true
	c.setRVLocked(rv)
	return rv, nil
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
		return fmt.Errorf("watch error: %v", ev.Object)
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
	c.mu.Lock()
	defer c.mu.Unlock()
	var prev *element
	if ev.Type == watch.Deleted {
		prev, _ = c.store.remove(e.key)
	} else {
		prev, _ = c.store.upsert(e)
	}
	recorded := &event{typ: ev.Type, rv: rv, recordTime: c.cfg.Clock.Now(), obj: e, prevObj: prev}
	c.history.add(recorded)
	c.setRVLocked(rv)
	c.dispatchLocked(recorded)
	return nil
}

func (c *Cache) setRVLocked(rv uint64) {
	c.rv = rv
	close(c.rvChanged)
	c.rvChanged = make(chan struct{})
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
