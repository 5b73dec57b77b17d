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

package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Server metrics the benchmarks read.
const (
	allocBytesTotal   = "go_memstats_alloc_bytes_total"  // cumulative bytes allocated
	heapInuseBytes    = "go_memstats_heap_inuse_bytes"   // bytes in in-use heap spans
	requestTotal      = "apiserver_request_total"        // requests by verb, resource, code...
	longRunning       = "apiserver_longrunning_requests" // open watches (and other long requests) by verb, resource...
	clockTicksPerSec  = 100                              // USER_HZ: /proc/<pid>/stat's unit on Linux
	heapSampleTimeout = 5 * time.Second                  // per heap sample
)

// The watch cache's own metrics (pkg/watchcache): the LISTs that reached it
// by group, resource, source ("cache", "snapshot" or "etcd") and reason, and
// the snapshots it holds per group and resource.
const (
	cacheListRequests = "miniapiserver_watch_cache_list_requests_total"
	cacheSnapshots    = "miniapiserver_watch_cache_snapshots"
)

// metrics is one scrape of the server's /metrics in the Prometheus text
// format.
type metrics []byte

// scrapeMetrics fetches the named metric families only (the name[] filter
// of client_golang's handler), which keeps each scrape's own allocations in
// the server small: a few hundred KiB, against about 1 MiB for all of them.
func scrapeMetrics(ctx context.Context, rc rest.Interface, names ...string) (metrics, error) {
	req := rc.Get().AbsPath("/metrics").SetHeader("Accept", "text/plain")
	for _, name := range names {
		req = req.Param("name[]", name)
	}
	body, err := req.DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping /metrics: %w", err)
	}
	return body, nil
}

// value is the sample of an unlabelled metric.
func (m metrics) value(name string) (float64, error) {
	for line := range bytes.Lines(m) {
		if v, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			return strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}

// sum adds up the samples of a labelled metric whose labels include every
// one of labels, each written as in the exposition: `verb="LIST"`.
func (m metrics) sum(name string, labels ...string) (float64, error) {
	var total float64
	for line := range bytes.Lines(m) {
		rest, ok := bytes.CutPrefix(line, []byte(name+"{"))
		if !ok {
			continue
		}
		set, sample, ok := bytes.Cut(rest, []byte("} "))
		if !ok || !hasLabels(set, labels) {
			continue
		}
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(sample)), 64)
		if err != nil {
			return 0, fmt.Errorf("parsing %s: %w", line, err)
		}
		total += v
	}
	return total, nil
}

func hasLabels(set []byte, labels []string) bool {
	for _, l := range labels {
		if !bytes.HasPrefix(set, []byte(l)) && !bytes.Contains(set, []byte(","+l)) {
			return false
		}
	}
	return true
}

// serverAllocBytes scrapes the server's cumulative allocated bytes.
func serverAllocBytes(ctx context.Context, rc rest.Interface) (float64, error) {
	m, err := scrapeMetrics(ctx, rc, allocBytesTotal)
	if err != nil {
		return 0, err
	}
	return m.value(allocBytesTotal)
}

// forceServerGC makes the server collect its garbage: a heap profile with
// gc=1 starts with runtime.GC (genericapiserver serves /debug/pprof). Twice,
// because what sync.Pools hold survives one collection.
func forceServerGC(ctx context.Context, rc rest.Interface) error {
	for range 2 {
		if err := rc.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").Do(ctx).Error(); err != nil {
			return fmt.Errorf("forcing a server GC via /debug/pprof/heap?gc=1: %w", err)
		}
	}
	return nil
}

// heapAfterGC waits for the server's OpenAPI v3 spec, forces a server GC,
// then scrapes go_memstats_heap_inuse_bytes and the other named metric
// families at once. It returns the scrape and the heap in use.
// (miniapiserver builds its OpenAPI v3 spec in the background once ready,
// kube-apiserver before: a heap read during the build would count the
// build's working memory.)
func heapAfterGC(ctx context.Context, rc rest.Interface, names ...string) (metrics, float64, error) {
	if err := rc.Get().AbsPath("/openapi/v3").Do(ctx).Error(); err != nil {
		return nil, 0, fmt.Errorf("waiting for the OpenAPI v3 spec: %w", err)
	}
	if err := forceServerGC(ctx, rc); err != nil {
		return nil, 0, err
	}
	m, err := scrapeMetrics(ctx, rc, append([]string{heapInuseBytes}, names...)...)
	if err != nil {
		return nil, 0, err
	}
	heap, err := m.value(heapInuseBytes)
	return m, heap, err
}

// heapPoint is one sample of a server's heap in use.
type heapPoint struct {
	at    time.Duration // since the sampler's origin
	bytes float64
}

// heapSampler samples a server's heap in use every period, one sample at a
// time, and keeps every sample with its time.
type heapSampler struct {
	heap   func(context.Context) (float64, error) // takes one sample
	period time.Duration
	origin time.Time // the samples' time zero

	mu     sync.Mutex // guards the fields below
	points []heapPoint
	err    error // the first failed sample
}

// run samples every period until ctx is done.
func (h *heapSampler) run(ctx context.Context) {
	tick := time.NewTicker(h.period)
	defer tick.Stop()
	for {
		h.sample(ctx)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

func (h *heapSampler) sample(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, heapSampleTimeout)
	defer cancel()
	v, err := h.heap(sctx)
	at := time.Since(h.origin)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil && h.err == nil:
		h.err = err
	case err == nil:
		h.points = append(h.points, heapPoint{at: at, bytes: v})
	}
}

// result is the samples, or the first error.
func (h *heapSampler) result() ([]heapPoint, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.points, h.err
}
