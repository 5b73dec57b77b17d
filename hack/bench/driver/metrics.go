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

package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Server metrics the benchmarks read.
const (
	AllocBytesTotal = "go_memstats_alloc_bytes_total"  // cumulative bytes allocated
	HeapInuseBytes  = "go_memstats_heap_inuse_bytes"   // bytes in in-use heap spans
	RequestTotal    = "apiserver_request_total"        // requests by verb, resource, code...
	LongRunning     = "apiserver_longrunning_requests" // open watches (and other long requests) by verb, resource...

	// miniapiserver's watch cache: the LISTs that reached it by group,
	// resource, source ("cache", "snapshot" or "etcd") and reason.
	cacheListRequests = "miniapiserver_watch_cache_list_requests_total"
	// kube-apiserver's LISTs by resource and storage ("watchcache" or "etcd").
	upstreamListsTotal = "apiserver_storage_list_total"

	clockTicksPerSec = 100 // USER_HZ: /proc/<pid>/stat's unit on Linux
)

// Metrics is one scrape of a /metrics in the Prometheus text format.
type Metrics []byte

// Scrape fetches the API server's named metric families only (the name[]
// filter of client_golang's handler), which keeps each scrape's own
// allocations in the server small.
func (s *Server) Scrape(ctx context.Context, names ...string) (Metrics, error) {
	req := s.client.CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain")
	for _, name := range names {
		req = req.Param("name[]", name)
	}
	body, err := req.DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping /metrics: %w", err)
	}
	return body, nil
}

// Value is the sample of an unlabelled metric.
func (m Metrics) Value(name string) (float64, error) {
	for line := range bytes.Lines(m) {
		if v, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			return strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}

// Sum adds up the samples of a labelled metric whose labels include every
// one of labels, each written as in the exposition: `verb="LIST"`.
func (m Metrics) Sum(name string, labels ...string) (float64, error) {
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

// AllocBytes is the bytes the server has allocated so far: kube-apiserver's
// plus its etcd's.
func (s *Server) AllocBytes(ctx context.Context) (float64, error) {
	return s.sumOverProcesses(ctx, AllocBytesTotal)
}

// HeapInuse is the server's heap in use now (kube-apiserver's plus its
// etcd's), without a GC: for sampling.
func (s *Server) HeapInuse(ctx context.Context) (float64, error) {
	return s.sumOverProcesses(ctx, HeapInuseBytes)
}

func (s *Server) sumOverProcesses(ctx context.Context, name string) (float64, error) {
	m, err := s.Scrape(ctx, name)
	if err != nil {
		return 0, err
	}
	v, err := m.Value(name)
	if err != nil || s.etcdURL == "" {
		return v, err
	}
	if m, err = s.scrapeEtcd(ctx, name); err != nil {
		return 0, err
	}
	etcd, err := m.Value(name)
	return v + etcd, err
}

// HeapAfterGC waits for the server's OpenAPI v3 spec, forces GCs, then
// returns the heap in use (kube-apiserver's plus its etcd's).
// (miniapiserver builds its OpenAPI v3 spec in the background once ready,
// kube-apiserver before: a heap read during the build would count the
// build's working memory.)
func (s *Server) HeapAfterGC(ctx context.Context) (float64, error) {
	rc := s.client.CoreV1().RESTClient()
	if err := rc.Get().AbsPath("/openapi/v3").Do(ctx).Error(); err != nil {
		return 0, fmt.Errorf("waiting for the OpenAPI v3 spec: %w", err)
	}
	// A heap profile with gc=1 starts with runtime.GC. Twice, because what
	// sync.Pools hold survives one collection.
	for range 2 {
		if err := rc.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").Do(ctx).Error(); err != nil {
			return 0, fmt.Errorf("forcing a GC via /debug/pprof/heap?gc=1: %w", err)
		}
		if s.etcdURL == "" {
			continue
		}
		if _, err := getURL(ctx, s.etcdURL+"/debug/pprof/heap?gc=1"); err != nil {
			return 0, fmt.Errorf("forcing an etcd GC via /debug/pprof/heap?gc=1: %w", err)
		}
	}
	return s.HeapInuse(ctx)
}

// ListsFromCache is how many LISTs of resource the server's watch cache
// has served itself so far (miniapiserver's from its latest state or a
// snapshot).
func (s *Server) ListsFromCache(ctx context.Context, resource string) (float64, error) {
	if s.Kind == Upstream {
		m, err := s.Scrape(ctx, upstreamListsTotal)
		if err != nil {
			return 0, err
		}
		return m.Sum(upstreamListsTotal, `resource="`+resource+`"`, `storage="watchcache"`)
	}
	return s.cacheLists(ctx, resource, "cache", "snapshot")
}

// cacheLists is how many LISTs of resource miniapiserver's watch cache has
// served so far from the sources named ("cache": its latest state,
// "snapshot", "etcd").
func (s *Server) cacheLists(ctx context.Context, resource string, sources ...string) (float64, error) {
	m, err := s.Scrape(ctx, cacheListRequests)
	if err != nil {
		return 0, err
	}
	var total float64
	for _, source := range sources {
		n, err := m.Sum(cacheListRequests, `resource="`+resource+`"`, `source="`+source+`"`)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// scrapeEtcd fetches the named metric families from etcd's client URL.
func (s *Server) scrapeEtcd(ctx context.Context, names ...string) (Metrics, error) {
	body, err := getURL(ctx, s.etcdURL+"/metrics?"+url.Values{"name[]": names}.Encode())
	if err != nil {
		return nil, fmt.Errorf("scraping etcd's /metrics: %w", err)
	}
	return body, nil
}

// getURL is the body of a GET of u if it answers 200.
func getURL(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	return body, nil
}

// HeapPoint is one sample of a server's heap in use.
type HeapPoint struct {
	At    time.Duration // since the sampler's start
	Bytes float64
}

// HeapSampler samples a server's heap in use (HeapInuse) every period, one
// sample at a time, from Start until its context is done.
type HeapSampler struct {
	server *Server
	period time.Duration
	origin time.Time
	done   chan struct{}

	mu     sync.Mutex // guards the fields below
	points []HeapPoint
	err    error // the first failed sample
}

// SampleHeap starts sampling s every period until ctx is done; Wait for
// the samples.
func (s *Server) SampleHeap(ctx context.Context, period time.Duration) *HeapSampler {
	h := &HeapSampler{server: s, period: period, origin: time.Now(), done: make(chan struct{})}
	go h.run(ctx)
	return h
}

func (h *HeapSampler) run(ctx context.Context) {
	defer close(h.done)
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

func (h *HeapSampler) sample(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := h.server.HeapInuse(sctx)
	at := time.Since(h.origin)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil && h.err == nil:
		h.err = err
	case err == nil:
		h.points = append(h.points, HeapPoint{At: at, Bytes: v})
	}
}

// Wait waits for the sampler's context to be done, then returns the
// samples, or the first error.
func (h *HeapSampler) Wait() ([]HeapPoint, error) {
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.points, h.err
}
