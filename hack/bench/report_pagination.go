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
	"fmt"
	"slices"
	"strings"
)

const (
	pagingTimeTarget  = 3.0  // etcd/cache wall time of a full paging, at least
	pagingAllocTarget = 5.0  // etcd/cache server alloc of a full paging, at least
	pagedTimeTarget   = 1.25 // paged/unpaginated wall time from the cache, at most
	heapGrowthTarget  = 0.10 // heap growth over the first pages / the cache's own size, less than
)

// paginationEncodings are the encodings of the paging rows, in table order.
var paginationEncodings = []string{"protobuf", "JSON"}

// writePagination is the pagination section: its listings, their ratios,
// and the heap growth over the first pages.
func (r report) writePagination(b *markdown) {
	p := r.pagination
	if len(p.cache.lists) == 0 {
		return
	}
	r.writePaginationProse(b)
	r.writePaginationResults(b)
	r.writePaginationRatios(b)
	r.writePaginationMemory(b)
	r.writeUpstreamPagination(b)
}

func (r report) writePaginationProse(b *markdown) {
	p, cfg := r.pagination, r.cfg
	prose := paginationProse{
		Objects: p.populate.objects, Payload: payloadSize, Namespace: namespace, Workers: cfg.workers,
		Populate: p.populate.duration, Limit: cfg.paginationLimit, ExactRVWrites: exactRVWrites,
		Runs: cfg.paginationRuns, AllocMetric: allocBytesTotal, Gzip: cfg.gzip, HeapMetric: heapInuseBytes,
		FirstPages: cfg.firstPages, WriteRate: cfg.writeRate,
	}
	if u := p.upstream; u != nil {
		prose.Upstream, prose.UpstreamPopulate = true, u.populate.duration
		prose.RouteMetric, prose.UpstreamRouteMetric = cacheListRequests, upstreamListsTotal
	}
	b.paragraph("pagination", prose)
}

// writePaginationResults is the table of every timed listing.
func (r report) writePaginationResults(b *markdown) {
	p, limit := r.pagination, r.cfg.paginationLimit
	fmt.Fprintf(b, "| pagination, %s ConfigMaps | variant | median | min | max | server alloc/op | note |\n", fmtCount(p.populate.objects))
	b.WriteString("|---|---|---|---|---|---|---|\n")
	paging := fmt.Sprintf("page through all (limit %d)", limit)
	for _, enc := range paginationEncodings {
		cache, _ := p.cache.list(enc, true)
		writeRow(b, paging, enc+", cache", cache.times, fmtBytes(cache.allocPerOp),
			shapeNote(cache)+"; "+snapshotNote(cache, "continuations"))
		if etcd, ok := p.etcd.list(enc, true); ok {
			writeRow(b, paging, enc+", etcd", etcd.times, fmtBytes(etcd.allocPerOp), flagsNote(etcdPath)+"; "+shapeNote(etcd))
		}
		one, _ := p.cache.list(enc, false)
		writeRow(b, "one LIST (no limit)", enc+", cache", one.times, fmtBytes(one.allocPerOp), shapeNote(one))
	}
	for i, bench := range []string{"exact-RV LIST, whole", fmt.Sprintf("exact-RV LIST, first page (limit %d)", limit)} {
		cache, etcd := p.cache.exact[i], p.etcd.exact[i]
		writeRow(b, bench, "protobuf, cache", cache.times, fmtBytes(cache.allocPerOp),
			fmt.Sprintf("RV %s, %d updates old; %s", p.rv, exactRVWrites, snapshotNote(cache, "requests")))
		writeRow(b, bench, "protobuf, etcd", etcd.times, fmtBytes(etcd.allocPerOp), flagsNote(etcdPath)+"; an RV of its own")
	}
	b.WriteString("\n")
}

func shapeNote(st routedStats) string {
	return fmt.Sprintf("%s page(s), %s uncompressed", fmtCount(st.shape.pages), fmtBytes(float64(st.shape.bytes)))
}

func flagsNote(path storagePath) string { return "`" + strings.Join(path.args, " ") + "`" }

// snapshotNote says how many of the requests that could come from snapshots
// did, in bold when some did not.
func snapshotNote(st routedStats, what string) string {
	note := fmt.Sprintf("%s of %s %s from snapshots", fmtCount(int(st.fromSnapshot)), fmtCount(int(st.snapshotable)), what)
	if st.fromSnapshot != st.snapshotable {
		return "**" + note + "**"
	}
	return note
}

// writePaginationRatios compares etcd with the cache, and paging with one
// request, against the targets.
func (r report) writePaginationRatios(b *markdown) {
	p := r.pagination
	b.WriteString("| pagination ratio (of medians) | wall time | server alloc | note |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, enc := range paginationEncodings {
		cache, _ := p.cache.list(enc, true)
		if etcd, ok := p.etcd.list(enc, true); ok {
			timeRatio, allocRatio := listTimeRatio(etcd.listStats, cache.listStats), etcd.allocPerOp/cache.allocPerOp
			writeRatioRow(b, enc+" paging: etcd / cache", timeRatio, allocRatio, fmt.Sprintf(
				"target cache ≥ %g× faster in total time and ≥ %g× fewer server-allocated bytes: %s",
				pagingTimeTarget, pagingAllocTarget, metNote(timeRatio >= pagingTimeTarget && allocRatio >= pagingAllocTarget)))
		}
	}
	for _, enc := range paginationEncodings {
		paged, _ := p.cache.list(enc, true)
		one, _ := p.cache.list(enc, false)
		timeRatio := listTimeRatio(paged.listStats, one.listStats)
		writeRatioRow(b, enc+" from the cache: paged / one request", timeRatio, paged.allocPerOp/one.allocPerOp,
			fmt.Sprintf("target ≤ %g× wall time: %s", pagedTimeTarget, metNote(timeRatio <= pagedTimeTarget)))
	}
	for i, label := range []string{"exact RV, whole list: etcd / cache", "exact RV, first page: etcd / cache"} {
		etcd, cache := p.etcd.exact[i], p.cache.exact[i]
		writeRatioRow(b, label, listTimeRatio(etcd.listStats, cache.listStats), etcd.allocPerOp/cache.allocPerOp, "–")
	}
	b.WriteString("\n")
}

func writeRatioRow(b *markdown, label string, timeRatio, allocRatio float64, note string) {
	fmt.Fprintf(b, "| %s | %s | %s | %s |\n", label, fmtRatio(timeRatio), fmtRatio(allocRatio), note)
}

// writePaginationMemory is the heap growth over the first pages against the
// cache's own size.
func (r report) writePaginationMemory(b *markdown) {
	p, m := r.pagination, r.pagination.cache.memory
	cacheSize := p.cache.heap - p.etcd.heap
	share := m.growth() / cacheSize
	b.WriteString("| pagination memory (default server) | heap after GC before | after | growth | cache's own size | growth / cache's size | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %s first pages (limit %d) while updating %d ConfigMaps/s | %s | %s | %s | %s | %.1f%% | "+
		"target < %.0f%%: %s; %s; %s of %s first pages from the cache, median %s, p99 %s; heap after GC of the %s server %s; "+
		"%s ConfigMap snapshots at the end (%s) |\n\n",
		fmtCount(r.cfg.firstPages), r.cfg.paginationLimit, r.cfg.writeRate,
		fmtBytes(m.before), fmtBytes(m.after), fmtBytes(m.growth()), fmtBytes(cacheSize), share*100,
		heapGrowthTarget*100, metNote(cacheSize > 0 && share < heapGrowthTarget), writesNote(*m),
		fmtCount(int(m.fromCache)), fmtCount(len(m.pages)), fmtDuration(median(m.pages)),
		fmtDuration(percentile(slices.Sorted(slices.Values(m.pages)), 0.99)), flagsNote(etcdPath), fmtBytes(p.etcd.heap),
		fmtCount(int(m.snapshots)), cacheSnapshots)
}

func writesNote(m memoryRun) string {
	return fmt.Sprintf("%s updates in %s (%.0f/s)", fmtCount(m.writes), fmtDuration(m.took), float64(m.writes)/m.took.Seconds())
}

// upstreamPair is the side-by-side listing of encoding, paged or not.
func (u *upstreamPagination) pair(encoding string, paged bool) (listPair, bool) {
	for _, p := range u.pairs {
		if p.ours.variant.encoding == encoding && (p.ours.variant.limit > 0) == paged {
			return p, true
		}
	}
	return listPair{}, false
}

// writeUpstreamPagination is a row per listing and server with the absolute
// figures, then the ratios of miniapiserver's medians over upstream's.
func (r report) writeUpstreamPagination(b *markdown) {
	u, limit := r.pagination.upstream, r.cfg.paginationLimit
	if u == nil || len(u.pairs) == 0 {
		return
	}
	type row struct {
		label string
		p     listPair
	}
	var rows []row
	for _, enc := range paginationEncodings {
		for _, paged := range []bool{true, false} {
			if p, ok := u.pair(enc, paged); ok {
				label := enc + ", one LIST (no limit)"
				if paged {
					label = fmt.Sprintf("%s, page through all (limit %d)", enc, limit)
				}
				rows = append(rows, row{label, p})
			}
		}
	}
	fmt.Fprintf(b, "| vs kube-apiserver: pagination, %s ConfigMaps | server | median | min | max | server alloc/op "+
		"| requests its watch cache served | note |\n", fmtCount(r.pagination.populate.objects))
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, row := range rows {
		for i, side := range []struct {
			server string
			st     listStats
		}{{"miniapiserver (watch cache)", row.p.ours}, {"kube-apiserver + etcd", row.p.upstream}} {
			st := side.st
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s page(s), %s uncompressed |\n", row.label, side.server,
				fmtDuration(median(st.times)), fmtDuration(slices.Min(st.times)), fmtDuration(slices.Max(st.times)),
				fmtBytes(st.allocPerOp), fromCacheNote(row.p.fromCache[i], row.p.requests[i]),
				fmtCount(st.shape.pages), fmtBytes(float64(st.shape.bytes)))
		}
	}
	b.WriteString("\n| pagination: ours / upstream (of medians) | wall time | server alloc (upstream: kube-apiserver + etcd) | note |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, row := range rows {
		p := row.p
		ratio := listTimeRatio(p.ours, p.upstream)
		whose := "the pagination target"
		if p.ours.variant.limit == 0 {
			whose = "the lists section's target for LISTs from the cache"
		}
		writeRatioRow(b, row.label, ratio, p.ours.allocPerOp/p.upstream.allocPerOp, fmt.Sprintf(
			"target ours ≥ %g× faster (≤ %.2f×), %s: %s", p.target, 1/p.target, whose, metNote(ratio <= 1/p.target)))
	}
	b.WriteString("\n")
}
