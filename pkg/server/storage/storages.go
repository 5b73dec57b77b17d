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

package storage

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	apiserverfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// Storages builds every resource's storage (its Decorator is the registry's
// generic.StorageDecorator) and keeps track of them, so that a graceful
// shutdown can end their watches at once instead of waiting for them to
// time out.
//
// This is the one place where the storage gates take effect: each resource
// gets upstream's etcd3 store; with --watch-cache, wrapped in a
// watchcache.Cache (PaginationFromCache: snapshots; EfficientWatchResumption:
// progress notifications, older watches resumed from etcd's history and
// shutdown bookmarks); with APIListChunking off,
// behind a filter that drops limit and continue. ConsistentWatchList takes
// effect through upstream's WatchList gate (features.Hold).
type Storages struct {
	opts Options
	// encodings is shared with the API groups' list serializers.
	encodings *watchcache.Encodings

	consistency consistencyChecks

	// etcdWatches are the watches served by etcd (no watch cache); its
	// shutdown marks the start of the storages' (see newCache).
	etcdWatches watchcache.Watches[*endableWatch]
	// continuesBefore is the revision before which continue tokens have
	// expired (ExpireContinues).
	continuesBefore atomic.Int64

	// mu guards caches and destroying.
	mu     sync.Mutex
	caches map[*watchcache.Cache]struct{}
	// destroying are the storages being destroyed (see Decorator), each
	// channel closed once its storage is.
	destroying []<-chan struct{}
}

// Options are the watch cache settings of pkg/server's Options.
type Options struct {
	// WatchCache serves reads and watches from a watch cache.
	WatchCache bool
	// WatchCacheHistoryWindow and WatchCacheHistorySize are each cache's
	// (watchcache.Config's HistoryWindow and MaxEvents).
	WatchCacheHistoryWindow time.Duration
	WatchCacheHistorySize   int
	// Faults, if set, applies injected faults to every storage.
	Faults Faults
}

// Faults applies injected faults to storages (pkg/testcontrols' Faults).
type Faults interface {
	// WrapStorage wraps what serves one resource; end ends one of its
	// watches (with a last bookmark, if asked and allowed).
	WrapStorage(s apistorage.Interface, end func(w watch.Interface, bookmark bool)) apistorage.Interface
	// Followed wraps what the watch cache of gr follows.
	Followed(gr schema.GroupResource, s apistorage.Interface) apistorage.Interface
}

// New returns the storages of a server with options o. Its caches check
// themselves against etcd as ConsistencyCheckerEnv says.
func New(o Options) (*Storages, error) {
	consistency, err := consistencyChecksFromEnv()
	if err != nil {
		return nil, err
	}
	s := &Storages{opts: o, consistency: consistency, caches: map[*watchcache.Cache]struct{}{}}
	if o.WatchCache {
		s.encodings = watchcache.NewEncodings()
	}
	return s, nil
}

// ConsistencyCheckerEnv, set to a duration ("10s"), makes every watch cache
// compare itself with etcd that often and once more when it is destroyed
// (the server stops, or its CRD changes), and panic on a mismatch: for test
// suites, as upstream's KUBE_WATCHCACHE_CONSISTENCY_CHECKER. Unset, the
// caches check every 5 minutes (upstream's period) and relist on a mismatch.
const ConsistencyCheckerEnv = "MINIAPISERVER_WATCHCACHE_CONSISTENCY_CHECKER"

type consistencyChecks struct {
	period time.Duration
	panic  bool
}

func consistencyChecksFromEnv() (consistencyChecks, error) {
	v, ok := os.LookupEnv(ConsistencyCheckerEnv)
	if !ok || v == "" {
		return consistencyChecks{period: 5 * time.Minute}, nil
	}
	period, err := time.ParseDuration(v)
	if err != nil || period <= 0 {
		return consistencyChecks{}, fmt.Errorf("%s=%q: want a positive duration such as 1s", ConsistencyCheckerEnv, v)
	}
	return consistencyChecks{period: period, panic: true}, nil
}

// Decorator implements generic.StorageDecorator.
func (s *Storages) Decorator(config *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(obj runtime.Object) (string, error),
	newFunc, newListFunc func() runtime.Object, getAttrsFunc apistorage.AttrFunc, triggers apistorage.IndexerFuncs, _ *cache.Indexers,
) (apistorage.Interface, factory.DestroyFunc, error) {
	raw, destroy, err := generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return nil, nil, err
	}
	var store apistorage.Interface = &etcdWatches{Interface: raw, watches: &s.etcdWatches}
	var cache *watchcache.Cache
	if s.opts.WatchCache {
		c, stop, err := s.newCache(raw, config, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrsFunc, triggers)
		if err != nil {
			destroy()
			return nil, nil, err
		}
		destroyRaw := destroy
		cache, store, destroy = c, c, func() { stop(); destroyRaw() }
	}
	store = expiringContinues{Interface: store, before: &s.continuesBefore}
	if !features.Enabled(features.APIListChunking) {
		store = withoutChunking{store}
	}
	if s.opts.Faults != nil {
		store = s.opts.Faults.WrapStorage(store, func(w watch.Interface, bookmark bool) {
			if cache == nil || !cache.EndWatch(w, bookmark) {
				w.Stop()
			}
		})
	}
	return store, s.inBackground(destroy), nil
}

// inBackground returns a destroy func that runs destroy in the background.
// The generic server destroys its storages one after another when it
// stops, and each closes an etcd client of its own (and its cache): in the
// background they close in parallel. WaitDestroyed waits for them.
func (s *Storages) inBackground(destroy factory.DestroyFunc) factory.DestroyFunc {
	return sync.OnceFunc(func() {
		done := make(chan struct{})
		s.mu.Lock()
		s.destroying = append(s.destroying, done)
		s.mu.Unlock()
		go func() {
			defer close(done)
			destroy()
		}()
	})
}

// WaitDestroyed waits until every storage destroyed so far is: before the
// etcd they use stops, and before the server that made them returns.
func (s *Storages) WaitDestroyed() {
	s.mu.Lock()
	destroying := s.destroying
	s.destroying = nil
	s.mu.Unlock()
	for _, done := range destroying {
		<-done
	}
}

// newCache starts a watch cache over raw, which it follows until stop.
func (s *Storages) newCache(raw apistorage.Interface, config *storagebackend.ConfigForResource, resourcePrefix string,
	keyFunc func(obj runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
	getAttrsFunc apistorage.AttrFunc, triggers apistorage.IndexerFuncs,
) (*watchcache.Cache, func(), error) {
	resumption := features.Enabled(features.EfficientWatchResumption)
	followed := raw
	if s.opts.Faults != nil {
		followed = s.opts.Faults.Followed(config.GroupResource, raw)
	}
	c, err := watchcache.New(watchcache.Config{
		Storage:           followed,
		ResourcePrefix:    resourcePrefix,
		NewFunc:           newFunc,
		NewListFunc:       newListFunc,
		KeyFunc:           keyFunc,
		GetAttrsFunc:      getAttrsFunc,
		GroupResource:     config.GroupResource,
		IndexFields:       slices.Sorted(maps.Keys(triggers)),
		HistoryWindow:     s.opts.WatchCacheHistoryWindow,
		MaxEvents:         s.opts.WatchCacheHistorySize,
		WatchInitialized:  utilflowcontrol.WatchInitialized,
		Encodings:         s.encodings,
		ProgressNotify:    resumption,
		ResumeFromStorage: resumption,
		ShutdownBookmarks: resumption,
		Snapshots:         features.Enabled(features.PaginationFromCache),
		EstimateSizes:     utilfeature.DefaultFeatureGate.Enabled(apiserverfeatures.SizeBasedListCostEstimate),

		ConsistencyCheckPeriod: s.consistency.period,
		PanicOnInconsistency:   s.consistency.panic,
	})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	s.mu.Lock()
	// Shutdown refuses etcd watches before it collects the caches under
	// s.mu: a cache made after that (a CRD changed meanwhile) ends its own
	// watches, as the collected ones do.
	late := s.etcdWatches.ShuttingDown()
	if !late {
		s.caches[c] = struct{}{}
	}
	s.mu.Unlock()
	if late {
		c.Shutdown(ctx)
	}
	return c, func() {
		s.mu.Lock()
		delete(s.caches, c)
		s.mu.Unlock()
		// A storage is destroyed while the server runs when its CRD
		// changes: its watches end as on a shutdown, those that allow
		// bookmarks after a final one, and their clients resume on the new
		// storage without relisting.
		if s.consistency.panic {
			// A test suite's last check, whatever the period: most test
			// servers stop before a period ends.
			c.CheckConsistency(ctx)
		}
		c.Shutdown(ctx)
		cancel()
		<-done
	}, nil
}

// Encodings are the kept encodings of the objects in the watch caches,
// which the API groups' serializers write from (nil without watch caches).
func (s *Storages) Encodings() *watchcache.Encodings { return s.encodings }

// Shutdown ends every open watch, the caches' after their final bookmarks
// (in parallel, each bounded by a second), and refuses new ones with 429.
func (s *Storages) Shutdown(ctx context.Context) {
	watches := s.etcdWatches.Shutdown() // first: newCache reads it as the shutdown's start
	s.mu.Lock()
	caches := slices.Collect(maps.Keys(s.caches))
	s.mu.Unlock()
	for _, w := range watches {
		w.Stop()
	}
	var wg sync.WaitGroup
	for _, c := range caches {
		wg.Go(func() { c.Shutdown(ctx) })
	}
	wg.Wait()
}

// etcdWatches tracks the watches the etcd3 store serves directly (with
// --watch-cache=false: a watch cache serves none from etcd, and tracks
// those it resumes from there itself), so that shutdown ends them.
type etcdWatches struct {
	apistorage.Interface
	watches *watchcache.Watches[*endableWatch]
}

func (e *etcdWatches) Watch(ctx context.Context, key string, opts apistorage.ListOptions) (watch.Interface, error) {
	if e.watches.ShuttingDown() {
		return nil, watchcache.ErrShuttingDown
	}
	w, err := e.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	ew := &endableWatch{Interface: w, watches: e.watches}
	if !e.watches.Add(ew) { // shutdown began meanwhile and did not see it
		w.Stop()
		return nil, watchcache.ErrShuttingDown
	}
	return ew, nil
}

// endableWatch is an etcd watch that forgets itself when stopped (the
// watch handler stops every watch it serves when it ends).
type endableWatch struct {
	watch.Interface
	watches *watchcache.Watches[*endableWatch]
	once    sync.Once
}

func (w *endableWatch) Stop() {
	w.once.Do(func() {
		w.Interface.Stop()
		w.watches.Forget(w)
	})
}

// withoutChunking ignores limit and continue, as an API server without
// KEP-365 does (APIListChunking off): whole lists, never a token.
type withoutChunking struct {
	apistorage.Interface
}

func (s withoutChunking) GetList(ctx context.Context, key string, opts apistorage.ListOptions, listObj runtime.Object) error {
	opts.Predicate.Limit = 0
	opts.Predicate.Continue = ""
	return s.Interface.GetList(ctx, key, opts, listObj)
}
