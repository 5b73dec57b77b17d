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
	"errors"
	"time"
)

// upstreamReport is a run with -upstream: the starts and lists sections
// side by side with kube-apiserver, one LIST target missed, -upstream-args
// given, and the rv0 section on miniapiserver only.
func upstreamReport() report {
	cfg := baseConfig("starts,lists,rv0")
	cfg.starts, cfg.lists, cfg.objects = 3, 3, 2000
	cfg.upstream = "/root/.cache/go-build/miniapiserver-upstream/v1.37.2-etcd-v3.7.2"
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 95 * time.Second}
	r.empty = startStats{runs: []startRun{{ms(206), ms(6.2)}, {ms(150), ms(5)}, {ms(232), ms(7)}}}
	r.populated = startStats{runs: []startRun{{ms(276), ms(10.9)}, {ms(227), ms(9)}, {ms(333), ms(12)}}}
	r.populate = populateStats{objects: 2000, duration: ms(1380)}
	bins := upstreamBinaries{apiserverVersion: "Kubernetes v1.37.2", etcdVersion: "etcd Version: 3.7.2",
		args: []string{"--enable-priority-and-fairness=false"}}
	upstream := startStats{runs: []startRun{{ms(4810), ms(1210)}, {ms(5120), ms(1190)}, {ms(4950), ms(1330)}}}
	r.upstream = &upstreamResult{bins: bins, starts: startPair{ours: r.empty, upstream: upstream},
		populate: populateStats{objects: 2000, duration: ms(2950)}}
	// Times per variant: ours, then upstream's; upstream/ours 2.0× except
	// where noted.
	times := [][2]float64{{12.8, 25.6}, {22, 44}, {13.9, 27.8}, {24, 48}, {15.7, 31.4}, {10.9, 21.8},
		{60, 120}, {48, 240}, {55, 275}} // the exact-RV JSON LIST: 2.0×, missed
	for i, v := range upstreamListVariants(cfg.page) {
		ours, theirs := v, v
		if v.match != "" {
			ours.rv, theirs.rv = "10104", "10311"
		}
		pages := 1
		if v.limit > 0 {
			pages = 4
		}
		p := listPair{
			ours:     listFixture(ours, 0.9*(1<<20), pages, 2_800_000, times[i][0]*0.9, times[i][0], times[i][0]*1.2),
			upstream: listFixture(theirs, 7.5*(1<<20), pages, 2_800_000, times[i][1]*0.9, times[i][1], times[i][1]*1.3),
			target:   upstreamListTarget,
		}
		if v.match != "" {
			p.target = upstreamExactTarget
		}
		// Upstream's watch cache serves first pages only, and no exact RV.
		requests := float64(pages * cfg.lists)
		p.fromCache, p.requests = [2]float64{requests, float64(cfg.lists)}, [2]float64{requests, requests}
		if v.match != "" {
			p.fromCache[1] = 0
		}
		r.upstream.lists = append(r.upstream.lists, p)
		if v.rv == "" {
			r.lists = append(r.lists, p.ours)
		}
	}
	rv := rv0Variants()
	r.rv0 = rv0Stats{
		cache: []listStats{listFixture(rv[0], 0.8*(1<<20), 1, 2_800_000, 15, 12, 21), listFixture(rv[1], 0.7*(1<<20), 1, 2_400_000, 10, 9, 17)},
		etcd:  []listStats{listFixture(rv[0], 18*(1<<20), 1, 2_800_000, 36, 31, 44), listFixture(rv[1], 18*(1<<20), 1, 2_400_000, 24, 21, 36)},
	}
	// The rv0 section's upstream figures are the lists section's.
	r.upstream.rv0, r.upstream.rv0FromLists = rv0Pairs(r.upstream.lists), true
	return r
}

// upstreamMoreReport is the rv0, crds, throughput and restarts sections
// side by side with kube-apiserver: rv0 measured on its own (no lists
// section), upstream's listings of custom resources partly from etcd, and
// kube-apiserver relisting every informer on every restart.
func upstreamMoreReport() report {
	cfg := baseConfig("rv0,crds,throughput,restarts")
	cfg.upstream = "/root/.cache/go-build/miniapiserver-upstream/v1.37.2-etcd-v3.7.2"
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 702 * time.Second}
	r.populate = populateStats{objects: 10000, duration: ms(6880)}
	rv := rv0Variants()
	r.rv0 = rv0Stats{
		cache: []listStats{listFixture(rv[0], 4.0*(1<<20), 1, 13_900_000, 78.4, 59.3, 107), listFixture(rv[1], 3.8*(1<<20), 1, 12_000_000, 54.3, 44.5, 83)},
		etcd:  []listStats{listFixture(rv[0], 90.9*(1<<20), 1, 13_900_000, 180, 157, 220), listFixture(rv[1], 90.7*(1<<20), 1, 12_000_000, 122, 104, 179)},
	}
	r.upstream = &upstreamResult{bins: upstreamBinaries{apiserverVersion: "Kubernetes v1.37.2", etcdVersion: "etcd Version: 3.7.2"},
		populate: populateStats{objects: 10000, duration: ms(14900)}}
	for i, theirs := range []float64{131, 88.2} {
		ours := r.rv0.cache[i]
		ours.times = durations([]float64{74.1, 51.7}[i], []float64{77.9, 53.8}[i], []float64{96, 70}[i])
		up := listFixture(rv[i], 30.2*(1<<20), 1, ours.shape.bytes, theirs*0.9, theirs, theirs*1.2)
		r.upstream.rv0 = append(r.upstream.rv0, listPair{ours: ours, upstream: up, target: upstreamListTarget,
			fromCache: [2]float64{3, 3}, requests: [2]float64{3, 3}})
	}
	r.crds = crdsFixture(cfg, 10000, 10, durations(642, 598, 701))
	up := &upstreamCRDs{setup: ms(412), populate: populateStats{objects: 10000, duration: ms(38200)}}
	for _, served := range []float64{5210, 4980, 5630} {
		up.starts = append(up.starts, upstreamStart{readyz: ms(served - 15), served: ms(served), stop: ms(1180)})
	}
	for i, l := range r.crds.cache.lists {
		theirs := listFixture(l.variant, 140.4*(1<<20), l.shape.pages, l.shape.bytes+20_000, 702, 651, 780)
		if i == 1 {
			theirs.times = durations(1540, 1390, 1720)
		}
		// Some of upstream's pages from etcd, for the bold note.
		up.lists = append(up.lists, listPair{ours: l.listStats, upstream: theirs,
			fromCache: [2]float64{l.fromCache, float64(r.cfg.lists)}, requests: [2]float64{float64(l.requests), float64(l.requests)}})
	}
	r.crds.upstream = up
	r.throughput = throughputFixture(cfg, 50000, true)
	r.throughput.upstreamHeap = &heapPerObject{objects: cfg.objects, empty: 152.4 * (1 << 20), before: 301.8 * (1 << 20), after: 355.0 * (1 << 20)}
	r.throughput.upstream = &throughputRun{writers: cfg.throughputWriters, watchers: cfg.throughputWatchers, updates: cfg.throughputUpdates,
		writing: ms(7310), delivered: ms(7330), events: 50000, resumed: 4}
	r.restarts = restartsFixture(0, 1)
	r.restarts.upstream = &restartStats{mode: upstreamRestartMode, runs: []restartRun{
		{relists: []int{1, 1, 1}, stop: ms(60040), restart: ms(4120), resync: ms(1830)},
		{relists: []int{1, 1, 1}, stop: ms(60050), restart: ms(3980), resync: ms(2410)},
		{relists: []int{1, 2, 1}, stop: ms(60030), restart: ms(4210), resync: ms(1650)},
	}}
	return r
}

// upstreamInformersReport is the informers section alone side by side with
// kube-apiserver, its heap picture in a temporary file (no -readme), and
// kube-apiserver's watch-list rounds falling back to LIST.
func upstreamInformersReport() report {
	cfg := baseConfig("informers")
	cfg.upstream = "/root/.cache/go-build/miniapiserver-upstream/v1.37.2-etcd-v3.7.2"
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 140 * time.Second}
	r.informers = informersFixture(0, 16)
	r.informers.upstream = &upstreamInformers{
		populate:  ms(3310),
		watchList: informerStats{mode: watchListMode, rounds: informerRounds(512.4, 190, 0.9, 16, 7020, 6810, 7450), perSample: 0.9 * (1 << 20)},
		list:      informerStats{mode: listMode, rounds: informerRounds(512.4, 95, 0.9, 16, 6900, 6620, 7010), perSample: 0.9 * (1 << 20)},
	}
	r.informers.heapSVG = "/tmp/miniapiserver-bench-informers-heap-123.svg"
	r.upstream = &upstreamResult{bins: upstreamBinaries{apiserverVersion: "Kubernetes v1.37.2", etcdVersion: "etcd Version: 3.7.2"}}
	return r
}

// upstreamSectionsReport is the pagination, watch and stops sections side by
// side with kube-apiserver: one pagination target missed, kube-apiserver's
// 1,000 watchers incomplete (some closed as unresponsive), and its stops
// waiting out its shutdown timeout, in one round long enough for a periodic
// BOOKMARK.
func upstreamSectionsReport() report {
	cfg := baseConfig("pagination,watch,stops")
	cfg.upstream = "/root/.cache/go-build/miniapiserver-upstream/v1.37.2-etcd-v3.7.2"
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 612 * time.Second}
	r.pagination = paginationFixture(cfg, 594, 594)
	r.pagination.upstream = &upstreamPagination{populate: populateStats{objects: cfg.paginationObjects, duration: ms(71200)}}
	// Upstream's medians per cache listing (listVariants order): the
	// protobuf paging is 1.2× ours, the rest at least 1.5×.
	upstreamMedians := []float64{802, 1190, 512, 544}
	for i, ours := range r.pagination.cache.lists {
		theirs := ours.listStats
		theirs.times = durations(upstreamMedians[i]*0.9, upstreamMedians[i], upstreamMedians[i]*1.2)
		theirs.allocPerOp *= 3.1
		theirs.shape.bytes += 2_000_000
		requests := float64(ours.shape.pages * cfg.paginationRuns)
		target := upstreamListTarget
		if ours.variant.limit > 0 {
			target = upstreamPagingTarget
		}
		r.pagination.upstream.pairs = append(r.pagination.upstream.pairs, listPair{ours: ours.listStats, upstream: theirs, target: target,
			fromCache: [2]float64{requests, requests}, requests: [2]float64{requests, requests}})
	}
	r.watch = []watchRun{
		watchFixture("cache", 100, 1000, 1, 3.8, 10.2, 22, 3570, 133.5*1024*1000),
		watchFixture("etcd", 100, 1000, 1, 69.1, 156, 200, 5770, 615.8*1024*1000),
		watchFixture("cache", 1000, 1000, 10, 24.6, 56.5, 108, 22950, 297.5*1024*1000),
		watchFixture("etcd", 1000, 1000, 10, 3810, 14510, 22990, 43870, 5*(1<<20)*1000),
	}
	small := watchFixture(upstreamWatchPath, 100, 1000, 1, 4.1, 9.8, 31, 3410, 150.2*1024*1000)
	small.etcdCPU, small.etcdAlloc = ms(610), 30.1*1024*1000
	large := watchFixture(upstreamWatchPath, 1000, 1000, 10, 61.2, 240.3, 1210, 25110, 400.4*1024*1000)
	large.etcdCPU, large.etcdAlloc = ms(650), 31.7*1024*1000
	large.latencies = large.latencies[:len(large.latencies)-3000]
	large.ended, large.endErr = 3, errors.New("the server ended the watch stream")
	r.stops = stopsFixture(1000, stopRun{})
	upstream := stopStats{upstream: true, watches: 1000}
	for i, stop := range []float64{60040, 60060, 60050} {
		run := stopRun{stop: ms(stop), conns: 10, bookmarkable: 500}
		if i == 0 {
			run.bookmarked = 500 // its watch cache's periodic BOOKMARK came before the exit
		}
		upstream.runs = append(upstream.runs, run)
	}
	r.upstream = &upstreamResult{bins: upstreamBinaries{apiserverVersion: "Kubernetes v1.37.2", etcdVersion: "etcd Version: 3.7.2"},
		watch: []watchRun{small, large}, stops: upstream}
	return r
}
