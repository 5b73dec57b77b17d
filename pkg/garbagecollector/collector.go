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

package garbagecollector

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Config is what New needs.
type Config struct {
	// Metadata reads, watches, patches and deletes objects of any resource.
	Metadata metadata.Interface
	// Discovery finds the resources to watch and maps the kinds of
	// ownerReferences to resources.
	Discovery discovery.DiscoveryInterfaceWithContext
	// Workers is how many objects are looked at concurrently (upstream's
	// --concurrent-gc-syncs); 0 means 5.
	Workers int
	// ResyncPeriod is how often the resources are re-discovered, so that
	// those of a new CRD are watched soon; 0 means a second (upstream: 30 s).
	ResyncPeriod time.Duration
}

// Collector is a garbage collector: see the package doc.
type Collector struct {
	metadata  metadata.Interface
	discovery discovery.CachedDiscoveryInterfaceWithContext
	// mapper maps ownerReferences to resources; resync resets it.
	mapper       *restmapper.DeferredDiscoveryRESTMapper
	workers      int
	resyncPeriod time.Duration
	graph        *graph

	// attemptToDelete holds the objects to look at: delete if no owner is
	// left, drop dangling ownerReferences, finish a foreground deletion.
	// attemptToOrphan holds the owners whose dependents to orphan.
	attemptToDelete workqueue.TypedRateLimitingInterface[types.UID]
	attemptToOrphan workqueue.TypedRateLimitingInterface[types.UID]

	// workerLock is held for reading by a worker looking at an object, and
	// for writing by resync while new monitors list, so no foreground
	// deletion finishes without the dependents they are about to show
	// (upstream's workerLock).
	workerLock sync.RWMutex
	// unknownKinds holds the objects that had an owner of a kind not served
	// when they were looked at: resync looks at them again as soon as new
	// resources are served, not after their backoff (a CRD just created).
	unknownKindsMu sync.Mutex
	unknownKinds   sets.Set[types.UID] // guarded by unknownKindsMu

	// monitors are touched only by Run's goroutine; monitorsWG tracks
	// their informers.
	monitors   map[schema.GroupVersionResource]*monitor
	monitorsWG sync.WaitGroup
}

// New returns a collector; Run runs it.
func New(c Config) (*Collector, error) {
	if c.Metadata == nil {
		return nil, errors.New("garbagecollector: Config.Metadata is required")
	}
	if c.Discovery == nil {
		return nil, errors.New("garbagecollector: Config.Discovery is required")
	}
	if c.Workers <= 0 {
		c.Workers = 5
	}
	if c.ResyncPeriod <= 0 {
		c.ResyncPeriod = time.Second
	}
	cached := memory.NewMemCacheClientWithContext(c.Discovery)
	newQueue := func(name string) workqueue.TypedRateLimitingInterface[types.UID] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.UID](),
			workqueue.TypedRateLimitingQueueConfig[types.UID]{Name: name})
	}
	return &Collector{
		metadata:        c.Metadata,
		discovery:       cached,
		mapper:          restmapper.NewDeferredDiscoveryRESTMapperWithContext(cached),
		workers:         c.Workers,
		resyncPeriod:    c.ResyncPeriod,
		graph:           newGraph(),
		attemptToDelete: newQueue("garbage_collector_attempt_to_delete"),
		attemptToOrphan: newQueue("garbage_collector_attempt_to_orphan"),
		unknownKinds:    sets.New[types.UID](),
		monitors:        map[schema.GroupVersionResource]*monitor{},
	}, nil
}

// Run collects garbage until ctx ends, then returns once every goroutine it
// started has. Call it once.
func (c *Collector) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	logger := klog.FromContext(ctx)
	var workers sync.WaitGroup
	defer func() {
		c.attemptToDelete.ShutDown()
		c.attemptToOrphan.ShutDown()
		workers.Wait()
		c.stopMonitors()
		logger.V(2).Info("Garbage collector stopped")
	}()

	// The workers start once the graph holds what the monitors first listed.
	c.resync(ctx)
	logger.V(2).Info("Garbage collector started", "resources", len(c.monitors))
	for range c.workers {
		workers.Go(func() { c.runWorker(ctx, c.attemptToDelete, c.attemptToDeleteItem) })
	}
	workers.Go(func() { c.runWorker(ctx, c.attemptToOrphan, c.attemptToOrphanItem) })

	ticker := time.NewTicker(c.resyncPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			c.resync(ctx)
		}
	}
}

// syncFunc is a worker's action on one queued object: requeue asks to look
// again later without it being an error.
type syncFunc func(ctx context.Context, uid types.UID) (requeue bool, err error)

func (c *Collector) runWorker(ctx context.Context, queue workqueue.TypedRateLimitingInterface[types.UID], work syncFunc) {
	defer utilruntime.HandleCrash()
	for c.processNext(ctx, queue, work) {
	}
}

func (c *Collector) processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[types.UID], work syncFunc) bool {
	uid, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(uid)
	c.workerLock.RLock()
	requeue, err := work(ctx, uid)
	c.workerLock.RUnlock()
	switch {
	case err != nil:
		if ctx.Err() == nil {
			klog.FromContext(ctx).V(2).Info("Garbage collection failed, will retry", "uid", uid, "err", err)
		}
		queue.AddRateLimited(uid)
	case requeue:
		queue.AddRateLimited(uid)
	default:
		queue.Forget(uid)
	}
	return true
}

// enqueue sends what a graph change returned to the workers.
func (c *Collector) enqueue(toDelete, toOrphan []types.UID) {
	for _, uid := range toDelete {
		c.attemptToDelete.Add(uid)
	}
	for _, uid := range toOrphan {
		c.attemptToOrphan.Add(uid)
	}
}
