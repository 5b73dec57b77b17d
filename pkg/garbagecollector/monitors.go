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
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// ignoredResources are never watched, as upstream's default: events are
// many, and own nothing.
var ignoredResources = map[schema.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// monitorSyncTimeout bounds how long the workers wait for new monitors'
// first list: a resource that cannot be listed must not stop collection.
const monitorSyncTimeout = 10 * time.Second

// monitor is the metadata informer of one resource.
type monitor struct {
	kind   string
	synced cache.InformerSynced
	cancel context.CancelFunc
}

// deletableResources returns the preferred version of every resource that
// supports delete, list and watch, with its kind, but the ignored ones
// (upstream's GetDeletableResources). On a partial discovery failure it
// returns what it found, and the error.
func deletableResources(ctx context.Context, d discovery.ServerResourcesInterfaceWithContext) (map[schema.GroupVersionResource]string, error) {
	lists, err := d.ServerPreferredResourcesWithContext(ctx)
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"delete", "list", "watch"}}, lists)
	resources := map[schema.GroupVersionResource]string{}
	for _, list := range lists {
		gv, perr := schema.ParseGroupVersion(list.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range list.APIResources {
			gvr := gv.WithResource(r.Name)
			if strings.Contains(r.Name, "/") || ignoredResources[gvr.GroupResource()] {
				continue
			}
			resources[gvr] = r.Kind
		}
	}
	return resources, err
}

// resync re-discovers the resources, starts monitors for the new ones and
// stops those of resources no longer served (upstream's Sync). It returns
// once the new monitors have listed, or timed out.
func (c *Collector) resync(ctx context.Context) {
	logger := klog.FromContext(ctx)
	// Forget the cached discovery, which the mapper shares: both see the
	// resources found now.
	c.mapper.ResetWithContext(ctx)
	resources, err := deletableResources(ctx, c.discovery)
	if err != nil {
		failed, partial := discovery.GroupDiscoveryFailedErrorGroups(err)
		if !partial {
			logger.V(2).Info("Discovering resources to garbage collect failed", "err", err)
			return
		}
		// Keep watching the groups that did not answer this time.
		logger.V(2).Info("Discovering some groups failed", "err", err)
		for gvr, m := range c.monitors {
			if _, ok := failed[gvr.GroupVersion()]; ok {
				resources[gvr] = m.kind
			}
		}
	}

	var started []cache.InformerSynced
	for gvr, kind := range resources {
		if _, ok := c.monitors[gvr]; !ok {
			m := c.startMonitor(ctx, gvr, kind)
			c.monitors[gvr] = m
			started = append(started, m.synced)
		}
	}
	for gvr, m := range c.monitors {
		if _, ok := resources[gvr]; !ok {
			logger.V(2).Info("Resource gone, no longer watched", "resource", gvr)
			m.cancel()
			delete(c.monitors, gvr)
			// Its objects may be gone too (their CRD deleted): the workers
			// check each, and look at their dependents if so.
			c.enqueue(c.graph.objectsOf(gvr), nil)
		}
	}
	if len(started) == 0 {
		return
	}
	logger.V(2).Info("Watching new resources", "count", len(started))
	c.workerLock.Lock()
	defer c.workerLock.Unlock()
	syncCtx, cancel := context.WithTimeout(ctx, monitorSyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), started...) && ctx.Err() == nil {
		logger.V(2).Info("Some new resources could not be listed yet; collecting anyway")
	}
	c.retryUnknownKinds()
}

// retryUnknownKinds requeues at once, with their backoff reset, the
// objects whose owners' kinds were unknown.
func (c *Collector) retryUnknownKinds() {
	c.unknownKindsMu.Lock()
	uids := c.unknownKinds
	c.unknownKinds = sets.New[types.UID]()
	c.unknownKindsMu.Unlock()
	for uid := range uids {
		c.attemptToDelete.Forget(uid)
		c.attemptToDelete.Add(uid)
	}
}

// startMonitor starts the informer of one resource, which runs until
// stopMonitors or resync cancels it.
func (c *Collector) startMonitor(ctx context.Context, gvr schema.GroupVersionResource, kind string) *monitor {
	informer := metadatainformer.NewFilteredMetadataInformer(c.metadata, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	observe := func(old, obj any) {
		cur, ok := obj.(*metav1.PartialObjectMetadata)
		if !ok {
			return
		}
		prev, _ := old.(*metav1.PartialObjectMetadata)
		c.enqueue(c.graph.observe(newNode(gvr, kind, cur), prev, cur))
	}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(nil, obj) },
		UpdateFunc: observe,
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if cur, ok := obj.(*metav1.PartialObjectMetadata); ok {
				c.enqueue(c.graph.remove(cur.UID), nil)
			}
		},
	})
	if err != nil { // only if the informer had stopped
		klog.FromContext(ctx).V(2).Info("Watching resource failed", "resource", gvr, "err", err)
	}
	monitorCtx, cancel := context.WithCancel(ctx)
	c.monitorsWG.Go(func() {
		defer utilruntime.HandleCrash()
		informer.RunWithContext(monitorCtx)
	})
	return &monitor{kind: kind, synced: informer.HasSynced, cancel: cancel}
}

// stopMonitors stops every informer and waits until they have returned.
func (c *Collector) stopMonitors() {
	for gvr, m := range c.monitors {
		m.cancel()
		delete(c.monitors, gvr)
	}
	c.monitorsWG.Wait()
}
