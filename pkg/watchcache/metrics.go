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
	"sync"
	"time"

	cachermetrics "k8s.io/apiserver/pkg/storage/cacher/metrics"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The cache reports upstream's watch-cache metrics, with upstream's names
// and labels (k8s.io/apiserver/pkg/storage/cacher/metrics), so dashboards
// built for kube-apiserver work. LISTs it serves also count in
// apiserver_storage_list_*{storage="watchcache"}; the etcd3 store counts
// the ones it serves with storage="etcd".

// Two metrics of our own (upstream has none for snapshots) show how LISTs
// are routed. Each LIST that reaches the cache counts once in
// miniapiserver_watch_cache_list_requests_total: source "cache" (its latest
// state), "snapshot" (an exact resourceVersion or a continuation), or "etcd"
// (delegated), with the reason for the choice.
var (
	snapshotsGauge = k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{
		Namespace:      "miniapiserver",
		Subsystem:      "watch_cache",
		Name:           "snapshots",
		Help:           "Number of snapshots of its state the watch cache holds to serve exact-resourceVersion and continued LISTs (KEP-4988).",
		StabilityLevel: k8smetrics.ALPHA,
	}, []string{"group", "resource"})
	listRequests = k8smetrics.NewCounterVec(&k8smetrics.CounterOpts{
		Namespace:      "miniapiserver",
		Subsystem:      "watch_cache",
		Name:           "list_requests_total",
		Help:           "LIST requests that reached the watch cache, by where they were served from (cache, snapshot or etcd) and why.",
		StabilityLevel: k8smetrics.ALPHA,
	}, []string{"group", "resource", "source", "reason"})
	resumedFromStorage = k8smetrics.NewCounterVec(&k8smetrics.CounterOpts{
		Namespace:      "miniapiserver",
		Subsystem:      "watch_cache",
		Name:           "watches_resumed_from_storage_total",
		Help:           "Watches from a resourceVersion older than the watch cache's history that were served from etcd's history instead of answered with 410.",
		StabilityLevel: k8smetrics.ALPHA,
	}, []string{"group", "resource"})
	registerOwnMetrics sync.Once
)

func registerMetrics() {
	cachermetrics.Register()
	registerOwnMetrics.Do(func() {
		legacyregistry.MustRegister(snapshotsGauge, listRequests, resumedFromStorage)
	})
}

// recordSnapshots reports how many snapshots the cache holds; c.mu is held.
func (c *Cache) recordSnapshots() {
	snapshotsGauge.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Set(float64(c.snaps.len()))
}

func (c *Cache) recordListRoute(source listSource, reason string) {
	listRequests.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource, string(source), reason).Inc()
}

func (c *Cache) recordList(index string, fetched, returned int) {
	cachermetrics.RecordListCacheMetrics(c.cfg.GroupResource, index, fetched, returned)
}

func (c *Cache) recordResourceVersion(rv uint64) {
	cachermetrics.RecordResourceVersion(c.cfg.GroupResource, rv)
}

func (c *Cache) recordEventReceived() {
	cachermetrics.EventsReceivedCounter.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Inc()
}

func (c *Cache) recordEventDispatched() {
	cachermetrics.EventsCounter.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Inc()
}

func (c *Cache) recordTerminatedWatcher() {
	cachermetrics.TerminatedWatchersCounter.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Inc()
}

func (c *Cache) recordInitEvents(n int) {
	cachermetrics.InitCounter.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Add(float64(n))
}

func (c *Cache) recordReadWait(start time.Time) {
	cachermetrics.WatchCacheReadWait.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Observe(c.cfg.Clock.Since(start).Seconds())
}

func (c *Cache) recordConsistencyCheck(success bool) {
	status := "success"
	if !success {
		status = "failure"
	}
	cachermetrics.StorageConsistencyCheckTotal.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource, status).Inc()
}

func (c *Cache) recordConsistentRead(success, fallback bool) {
	cachermetrics.ConsistentReadTotal.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource, boolLabel(success), boolLabel(fallback)).Inc()
}

// recordInitialization counts a (re)list of the resource into the cache.
func (c *Cache) recordInitialization(start time.Time, err error) {
	gr := c.cfg.GroupResource
	if err != nil {
		cachermetrics.WatchCacheInitializationErrors.WithLabelValues(gr.Group, gr.Resource).Inc()
		return
	}
	cachermetrics.WatchCacheInitializations.WithLabelValues(gr.Group, gr.Resource).Inc()
	cachermetrics.WatchCacheInitializationDuration.WithLabelValues(gr.Group, gr.Resource).Observe(c.cfg.Clock.Since(start).Seconds())
}

// recordCapacity reports the history's capacity. It is fixed (MaxEvents;
// the time window does the rest), so it never grows or shrinks.
func (c *Cache) recordCapacity() {
	cachermetrics.WatchCacheCapacity.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Set(float64(c.cfg.MaxEvents))
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func (c *Cache) recordResumedFromStorage() {
	resumedFromStorage.WithLabelValues(c.cfg.GroupResource.Group, c.cfg.GroupResource.Resource).Inc()
}
