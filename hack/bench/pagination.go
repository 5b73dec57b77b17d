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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// exactRVWrites is how many ConfigMaps are updated after the resourceVersion
// the exact-RV LISTs read at, so that they read the past: a snapshot, or
// etcd's history, not the latest state.
const exactRVWrites = 100

// The watch cache's route labels (pkg/watchcache) the section checks.
const (
	routeCache      = "cache"      // source: its latest state
	routeSnapshot   = "snapshot"   // source: the state at an exact resourceVersion
	routeConsistent = "consistent" // reason: RV unset
	routeContinue   = "continue"   // reason: a continue token at its RV
	routeExact      = "exact"      // reason: resourceVersionMatch=Exact
)

// paginationResult is the pagination section.
type paginationResult struct {
	populate populateStats
	rv       string // the cache's exact-RV LISTs read at it (the etcd server had its own)
	cache    paginationRun
	etcd     paginationRun
	upstream *upstreamPagination // with -upstream
}

// upstreamPagination is the cache server's paged and unpaginated listings
// timed side by side with kube-apiserver's on the same number of
// ConfigMaps, interleaved.
type upstreamPagination struct {
	populate populateStats // creating them through kube-apiserver in its own etcd
	pairs    []listPair    // listVariants order; ours are the cache run's lists
}

// Target against upstream: how many times faster (upstream's median over
// ours) miniapiserver's cache should page through every object; its
// unpaginated LISTs have the lists section's target (upstreamListTarget).
const upstreamPagingTarget = 1.5

// paginationRun is what one server measured.
type paginationRun struct {
	path  storagePath
	lists []routedStats // listVariants order; on etcd only the paged ones
	exact []routedStats // the whole list, then its first page, at an exact RV
	heap  float64       // heap in use after a forced GC, after the listings
	// memory is the first-pages measurement; nil on etcd.
	memory *memoryRun
}

// list is the listing of encoding, paged or in one request.
func (run paginationRun) list(encoding string, paged bool) (routedStats, bool) {
	for _, st := range run.lists {
		if st.variant.encoding == encoding && (st.variant.limit > 0) == paged {
			return st, true
		}
	}
	return routedStats{}, false
}

// routedStats are timed listings and how many of their requests the watch
// cache served from snapshots.
type routedStats struct {
	listStats
	fromSnapshot float64 // requests served from a snapshot
	snapshotable float64 // requests that could be: continuations, or exact-RV LISTs
}

// memoryRun is the heap of the default server around first pages issued
// while a writer updates ConfigMaps.
type memoryRun struct {
	before, after float64         // heap in use after a forced GC
	pages         []time.Duration // one per first page
	fromCache     float64         // first pages the cache served from its latest state
	writes        int             // ConfigMaps the writer updated meanwhile
	took          time.Duration   // from the first page to the last
	snapshots     float64         // the cache's ConfigMap snapshots afterwards
}

func (m memoryRun) growth() float64 { return m.after - m.before }

// benchPagination populates a data dir of its own, then measures the
// default server and one without the watch cache on it, in turn. With ub
// it populates upstream's etcd with as many ConfigMaps too, and the
// default server's paged and unpaginated listings run side by side with
// upstream's.
func benchPagination(ctx context.Context, cfg config, root string, ub *upstreamBench) (res paginationResult, err error) {
	dir := filepath.Join(root, "pagination")
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	if res.populate, err = populate(ctx, cfg, dir, cfg.paginationObjects); err != nil {
		return paginationResult{}, fmt.Errorf("pagination: %w", err)
	}
	var up *upstreamPaging
	if ub != nil {
		up = &upstreamPaging{ub: ub, dir: filepath.Join(ub.root, "upstream-pagination")}
		defer func() { err = errors.Join(err, os.RemoveAll(up.dir)) }()
		res.upstream = &upstreamPagination{}
		if res.upstream.populate, err = ub.populate(ctx, cfg, up.dir, cfg.paginationObjects); err != nil {
			return paginationResult{}, fmt.Errorf("pagination: %w", err)
		}
	}
	if res.cache, res.rv, err = paginationOnServer(ctx, cfg, dir, cachePath, up); err != nil {
		return paginationResult{}, err
	}
	if up != nil {
		res.upstream.pairs = up.pairs
	}
	if res.etcd, _, err = paginationOnServer(ctx, cfg, dir, etcdPath, nil); err != nil {
		return paginationResult{}, err
	}
	return res, nil
}

// upstreamPaging is upstream's part in the cache server's listings.
type upstreamPaging struct {
	ub    *upstreamBench
	dir   string     // its populated dir
	pairs []listPair // what the listings measured on both
}

// paginationOnServer starts a server for path on dataDir and runs the
// listings (with up, side by side with upstream's), the exact-RV LISTs, a
// heap reading after GC and, with the watch cache, the first-pages memory
// measurement. rv is what the exact-RV LISTs read at.
func paginationOnServer(ctx context.Context, cfg config, dataDir string, path storagePath, up *upstreamPaging) (run paginationRun, rv string, err error) {
	label := "pagination (" + path.name + ")"
	s, err := startServer(ctx, withArgs(cfg, path.args...), dataDir)
	if err != nil {
		return paginationRun{}, "", fmt.Errorf("%s: %w", label, err)
	}
	defer func() { err = errors.Join(err, s.Stop()) }()
	client, err := s.listClient(cfg.gzip)
	if err != nil {
		return paginationRun{}, "", err
	}
	rc := client.CoreV1().RESTClient()
	run.path = path
	if up != nil {
		run.lists, up.pairs, err = up.listings(ctx, cfg, rc, label)
	} else {
		run.lists, err = pagingListings(ctx, cfg, rc, path, label)
	}
	if err != nil {
		return paginationRun{}, "", err
	}
	if run.exact, rv, err = exactListings(ctx, cfg, client, label); err != nil {
		return paginationRun{}, "", err
	}
	// Both servers have done the same listings and writes by now, so the
	// difference of their heaps is the watch cache's.
	if _, run.heap, err = heapAfterGC(ctx, rc); err != nil {
		return paginationRun{}, "", err
	}
	progress("%s: heap in use after GC %s", label, fmtBytes(run.heap))
	if path.name == cachePath.name {
		m, err := firstPagesMemory(ctx, cfg, client, run.heap)
		if err != nil {
			return paginationRun{}, "", fmt.Errorf("%s, first pages: %w", label, err)
		}
		run.memory = &m
	}
	return run, rv, nil
}

// pagingListings times the paged listings and, from the cache, the
// unpaginated ones (etcd's are the lists and rv0 sections' business).
func pagingListings(ctx context.Context, cfg config, rc rest.Interface, path storagePath, label string) ([]routedStats, error) {
	var results []routedStats
	for _, v := range listVariants(cfg.paginationLimit) {
		if v.limit == 0 && path.name != cachePath.name {
			continue
		}
		st, err := routedList(ctx, cfg, rc, v, label, routeContinue)
		if err != nil {
			return nil, err
		}
		results = append(results, st)
	}
	return results, nil
}

// listings starts upstream on its populated dir and times listVariants on
// the cache server (rc) and on upstream, interleaved (benchListPair),
// counting the cache's continuations served from snapshots as routedList
// does; then it stops upstream, so that it is not running while the cache
// server's other measurements are.
func (up *upstreamPaging) listings(ctx context.Context, cfg config, rc rest.Interface, label string) (ours []routedStats, pairs []listPair, err error) {
	u, err := startUpstream(ctx, up.ub.bins, up.ub.pki, up.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("pagination (kube-apiserver): %w", err)
	}
	defer func() { err = errors.Join(err, prefixErr("pagination (kube-apiserver)", u.Stop())) }()
	client, err := u.api.listClient(cfg.gzip)
	if err != nil {
		return nil, nil, err
	}
	sides := [2]listSide{ourListSide(rc), upstreamListSide(client.CoreV1().RESTClient(), u.etcdURL, "configmaps")}
	for _, v := range listVariants(cfg.paginationLimit) {
		var p listPair
		served, err := countRoutes(ctx, rc, routeSnapshot, routeContinue, func() error {
			var err error
			p, err = benchListPair(ctx, "pagination", sides, v, cfg.paginationObjects, cfg.paginationRuns)
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", label, v, err)
		}
		if v.limit > 0 {
			p.target = upstreamPagingTarget
		}
		st := routedStats{listStats: p.ours}
		if v.limit > 0 {
			// As routedList: the continuations of the verified listing
			// and the timed ones.
			st.fromSnapshot, st.snapshotable = served, float64((st.shape.pages-1)*(cfg.paginationRuns+1))
		}
		ours, pairs = append(ours, st), append(pairs, p)
	}
	return ours, pairs, nil
}

// exactListings updates exactRVWrites ConfigMaps after taking a
// resourceVersion, then times the whole list and its first page at exactly
// that RV, in protobuf.
func exactListings(ctx context.Context, cfg config, client kubernetes.Interface, label string) ([]routedStats, string, error) {
	rv, err := rvBeforeWrites(ctx, client, cfg.paginationObjects)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", label, err)
	}
	whole := listVariant{encoding: "protobuf", accept: acceptProtobuf, rv: rv, match: string(metav1.ResourceVersionMatchExact)}
	first := whole
	first.limit, first.firstPage = cfg.paginationLimit, true
	var results []routedStats
	for _, v := range []listVariant{whole, first} {
		st, err := routedList(ctx, cfg, client.CoreV1().RESTClient(), v, label, routeExact)
		if err != nil {
			return nil, "", err
		}
		results = append(results, st)
	}
	return results, rv, nil
}

// routedList times v with benchList and counts how many of its requests
// the watch cache served from snapshots for reason (routeContinue or
// routeExact), and how many it could have.
func routedList(ctx context.Context, cfg config, rc rest.Interface, v listVariant, label, reason string) (routedStats, error) {
	var st routedStats
	served, err := countRoutes(ctx, rc, routeSnapshot, reason, func() error {
		var err error
		st.listStats, err = benchList(ctx, rc, v, cfg.paginationObjects, cfg.paginationRuns, label)
		return err
	})
	if err != nil {
		return routedStats{}, fmt.Errorf("%s %s: %w", label, v, err)
	}
	perListing := st.shape.pages // exact RV: every request
	if reason == routeContinue {
		perListing-- // the first page is at the latest state
	}
	listings := cfg.paginationRuns + 1 // benchList's verified one, then the timed ones
	st.fromSnapshot, st.snapshotable = served, float64(perListing*listings)
	return st, nil
}

// countRoutes runs do between two scrapes of the watch cache's route
// counter and returns how many ConfigMap LISTs it served from source for
// reason meanwhile (none without a watch cache).
func countRoutes(ctx context.Context, rc rest.Interface, source, reason string, do func() error) (float64, error) {
	labels := []string{`resource="configmaps"`, `source="` + source + `"`, `reason="` + reason + `"`}
	before, err := scrapeMetrics(ctx, rc, cacheListRequests)
	if err != nil {
		return 0, err
	}
	if err := do(); err != nil {
		return 0, err
	}
	after, err := scrapeMetrics(ctx, rc, cacheListRequests)
	if err != nil {
		return 0, err
	}
	n0, err0 := before.sum(cacheListRequests, labels...)
	n1, err1 := after.sum(cacheListRequests, labels...)
	return n1 - n0, errors.Join(err0, err1)
}

// rvBeforeWrites takes the resourceVersion of a LIST, then updates
// exactRVWrites ConfigMaps spread over all objects of them. The new values
// embed that RV, so a second server on the same data dir writes for real
// too.
func rvBeforeWrites(ctx context.Context, client kubernetes.Interface, objects int) (string, error) {
	list, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", fmt.Errorf("listing ConfigMaps: %w", err)
	}
	rv := list.ResourceVersion
	for i := range exactRVWrites {
		if err := touchConfigMap(ctx, client, i*objects/exactRVWrites, rv+"-"+strconv.Itoa(i)); err != nil {
			return "", err
		}
	}
	return rv, nil
}

// firstPagesMemory issues cfg.firstPages first pages (protobuf, never
// continued) while a writer updates ConfigMaps at cfg.writeRate a second,
// then reads the heap after a forced GC and the cache's snapshot count.
// before is the heap after GC just before.
func firstPagesMemory(ctx context.Context, cfg config, client kubernetes.Interface, before float64) (memoryRun, error) {
	m := memoryRun{before: before}
	rc := client.CoreV1().RESTClient()
	writeCtx, stopWriting := context.WithCancel(ctx)
	defer stopWriting()
	var writer sync.WaitGroup
	var writeErr error
	writer.Go(func() { m.writes, writeErr = writeSteadily(writeCtx, client, cfg.paginationObjects, cfg.writeRate) })

	v := listVariant{encoding: "protobuf", accept: acceptProtobuf, limit: cfg.paginationLimit, firstPage: true}
	began := time.Now()
	fromCache, err := countRoutes(ctx, rc, routeCache, routeConsistent, func() error {
		var err error
		m.pages, err = timeListings(ctx, rc, v, cfg.firstPages)
		return err
	})
	m.took, m.fromCache = time.Since(began), fromCache
	stopWriting()
	writer.Wait()
	if err = errors.Join(err, writeErr); err != nil {
		return memoryRun{}, err
	}

	after, heap, err := heapAfterGC(ctx, rc, cacheSnapshots)
	if err != nil {
		return memoryRun{}, err
	}
	m.after = heap
	if m.snapshots, err = after.sum(cacheSnapshots, `resource="configmaps"`); err != nil {
		return memoryRun{}, err
	}
	progress("pagination (cache): %d first pages in %s with %d updates; heap after GC %s → %s; %.0f snapshots",
		len(m.pages), fmtDuration(m.took), m.writes, fmtBytes(m.before), fmtBytes(m.after), m.snapshots)
	return m, nil
}

// timeListings lists v n times, one after another, and times each.
func timeListings(ctx context.Context, rc rest.Interface, v listVariant, n int) ([]time.Duration, error) {
	times := make([]time.Duration, 0, n)
	for i := range n {
		began := time.Now()
		if _, err := listAll(ctx, rc, v, nil); err != nil {
			return nil, fmt.Errorf("%s, %d/%d: %w", v, i+1, n, err)
		}
		times = append(times, time.Since(began))
	}
	return times, nil
}

// writeSteadily updates ConfigMaps round-robin, rate a second, one at a time,
// until ctx is done, and returns how many it updated. When an update takes
// longer than its slot, the missed slots are skipped, not made up.
func writeSteadily(ctx context.Context, client kubernetes.Interface, objects, rate int) (int, error) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return n, nil
		}
		if err := touchConfigMap(ctx, client, n%objects, "steady-"+strconv.Itoa(n)); err != nil {
			if ctx.Err() != nil {
				return n, nil // cut short by the end of the first pages
			}
			return n, err
		}
	}
}
