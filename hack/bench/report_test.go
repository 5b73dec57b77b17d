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
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/report-*.md from the current output")

// TestReportGolden pins the Markdown the report prints for fixed results,
// prose and tables alike. Run with -update after an intended change and
// review the diff of testdata.
func TestReportGolden(t *testing.T) {
	tests := []struct {
		name string
		r    report
	}{
		{name: "all", r: fullReport()},
		{name: "variants", r: variantsReport()},
		{name: "cache-only-watch", r: cacheOnlyWatchReport()},
		{name: "crds-only", r: crdsOnlyReport()},
		{name: "upstream", r: upstreamReport()},
		{name: "upstream-informers", r: upstreamInformersReport()},
		{name: "upstream-sections", r: upstreamSectionsReport()},
		{name: "upstream-more", r: upstreamMoreReport()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := tt.r.write(&got); err != nil {
				t.Fatalf("write: %v", err)
			}
			golden := filepath.Join("testdata", "report-"+tt.name+".md")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if line, g, w := firstDiff(got.String(), string(want)); line > 0 {
				t.Errorf("report differs from %s (go test -update rewrites it) at line %d:\ngot  %q\nwant %q", golden, line, g, w)
			}
		})
	}
}

// firstDiff is the first line (from 1) where got and want differ, and the
// two lines there; 0 if they are equal.
func firstDiff(got, want string) (line int, g, w string) {
	if got == want {
		return 0, "", ""
	}
	gl, wl := strings.SplitAfter(got, "\n"), strings.SplitAfter(want, "\n")
	for i := range max(len(gl), len(wl)) {
		g, w = "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return i + 1, g, w
		}
	}
	return 0, "", ""
}

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

func durations(xs ...float64) []time.Duration {
	var ds []time.Duration
	for _, x := range xs {
		ds = append(ds, ms(x))
	}
	return ds
}

func baseConfig(only string) config {
	cfg := config{
		server: "/work/bin/miniapiserver", serverFlag: "bin/miniapiserver", starts: 7, lists: 10, objects: 10000, page: 500, workers: 16, gzip: true,
		crds: 20, crs: 10000,
		watchers: []int{100, 1000}, etcdWatchersMax: 1000, watchersPerConn: 100, events: 1000,
		informers: 16, informerRounds: 3, secrets: 100, secretSize: 1 << 20, heapSample: 20 * time.Millisecond,
		throughputWriters: 16, throughputWatchers: 10, throughputUpdates: 5000,
		paginationObjects: 50000, paginationLimit: 500, paginationRuns: 5, firstPages: 1000, writeRate: 50,
		stopWatches: 1000, stopRounds: 3, restartObjects: 100, restartRounds: 3,
	}
	var err error
	if cfg.sections, err = parseSections(only); err != nil {
		panic(err)
	}
	return cfg
}

func listFixture(v listVariant, alloc float64, pages, size int, times ...float64) listStats {
	return listStats{variant: v, times: durations(times...), allocPerOp: alloc, shape: listing{pages: pages, bytes: size}}
}

func fullReport() report {
	cfg := baseConfig("starts,lists,rv0,crds,pagination,watch,throughput,informers,stops,restarts")
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 219 * time.Second}
	r.empty = startStats{runs: []startRun{{ms(206), ms(6.2)}, {ms(150), ms(5)}, {ms(232), ms(7)}}}
	r.populated = startStats{runs: []startRun{{ms(376), ms(10.9)}, {ms(327), ms(9)}, {ms(433), ms(12)}}}
	r.populate = populateStats{objects: 10000, duration: ms(6880)}
	lv := listVariants(cfg.page)
	r.lists = []listStats{
		listFixture(lv[0], 4.2*(1<<20), 1, 13_900_000, 63.8, 47.8, 83.7),
		listFixture(lv[1], 4.5*(1<<20), 20, 13_900_000, 109, 98.1, 130),
		listFixture(lv[2], 3.8*(1<<20), 1, 12_000_000, 69.3, 55.1, 136),
		listFixture(lv[3], 4.4*(1<<20), 20, 12_000_000, 120, 96.4, 159),
	}
	rv := rv0Variants()
	r.rv0 = rv0Stats{
		cache: []listStats{listFixture(rv[0], 4.0*(1<<20), 1, 13_900_000, 78.4, 59.3, 107), listFixture(rv[1], 3.8*(1<<20), 1, 12_000_000, 54.3, 44.5, 83)},
		etcd:  []listStats{listFixture(rv[0], 90.9*(1<<20), 1, 13_900_000, 180, 157, 220), listFixture(rv[1], 90.7*(1<<20), 1, 12_000_000, 122, 104, 179)},
	}
	r.crds = crdsFixture(cfg, 10000, 10, durations(642, 598, 701))
	r.pagination = paginationFixture(cfg, 594, 594)
	r.watch = []watchRun{
		watchFixture("cache", 100, 1000, 1, 3.8, 10.2, 22, 3570, 133.5*1024*1000),
		watchFixture("etcd", 100, 1000, 1, 69.1, 156, 200, 5770, 615.8*1024*1000),
		watchFixture("cache", 1000, 1000, 10, 24.6, 56.5, 108, 22950, 297.5*1024*1000),
		watchFixture("etcd", 1000, 1000, 10, 3810, 14510, 22990, 43870, 5*(1<<20)*1000),
	}
	r.throughput = throughputFixture(cfg, 50000, false)
	r.informers = informersFixture(0, 16)
	r.informers.heapSVG = readmeHeapSVG
	r.stops = stopsFixture(1000, stopRun{})
	r.restarts = restartsFixture(0, 1)
	return r
}

func paginationFixture(cfg config, fromSnapshot, snapshotable float64) paginationResult {
	lv := listVariants(cfg.paginationLimit)
	routed := func(v listVariant, alloc float64, pages, size int, from, could float64, times ...float64) routedStats {
		return routedStats{listStats: listFixture(v, alloc, pages, size, times...), fromSnapshot: from, snapshotable: could}
	}
	exact := listVariant{encoding: "protobuf", accept: acceptProtobuf, rv: "50004", match: "Exact"}
	first := exact
	first.limit, first.firstPage = cfg.paginationLimit, true
	return paginationResult{
		populate: populateStats{objects: cfg.paginationObjects, duration: ms(34840)},
		rv:       "50004",
		cache: paginationRun{
			path: cachePath,
			lists: []routedStats{
				routed(lv[0], 19.8*(1<<20), 1, 69_700_000, 0, 0, 297, 256, 647),
				routed(lv[1], 21.8*(1<<20), 100, 69_700_000, fromSnapshot, snapshotable, 456, 421, 474),
				routed(lv[2], 19.5*(1<<20), 1, 60_500_000, 0, 0, 247, 214, 280),
				routed(lv[3], 21.7*(1<<20), 100, 60_500_000, fromSnapshot, snapshotable, 453, 402, 495),
			},
			exact: []routedStats{
				routed(exact, 19.6*(1<<20), 1, 60_500_000, 6, 6, 304, 234, 459),
				routed(first, 298.7*1024, 1, 600_000, 6, 6, 4.2, 3.5, 4.6),
			},
			heap: 319.6 * (1 << 20),
			memory: &memoryRun{
				before: 319.6 * (1 << 20), after: 336.2 * (1 << 20), pages: durations(5.4, 4, 11.3, 6),
				fromCache: 4, writes: 289, took: ms(5800), snapshots: 390,
			},
		},
		etcd: paginationRun{
			path: etcdPath,
			lists: []routedStats{
				routed(lv[1], 503.3*(1<<20), 100, 69_700_000, 0, 594, 1340, 1220, 1500),
				routed(lv[3], 496.1*(1<<20), 100, 60_500_000, 0, 594, 1180, 1060, 1330),
			},
			exact: []routedStats{
				routed(exact, 447.4*(1<<20), 1, 60_500_000, 0, 6, 635, 552, 647),
				routed(first, 4.9*(1<<20), 1, 600_000, 0, 6, 10.8, 8.6, 14.6),
			},
			heap: 40.2 * (1 << 20),
		},
	}
}

func watchFixture(path string, watchers, events, conns int, p50, p99, maxLat, cpuMS, alloc float64) watchRun {
	n := watchers * events
	lat := make([]time.Duration, n)
	for i := range lat {
		switch {
		case i < n/2:
			lat[i] = ms(p50 * 0.5)
		case i < n*99/100:
			lat[i] = ms(p50)
		case i < n-1:
			lat[i] = ms(p99)
		default:
			lat[i] = ms(maxLat)
		}
	}
	return watchRun{path: path, watchers: watchers, conns: conns, events: events, latencies: lat,
		writing: ms(3150), cpu: ms(cpuMS), allocBytes: alloc}
}

// throughputFixture is the throughput section with events events read by
// the etcd run's watchers (the cache's get all of them), timed out if fewer,
// and the heap measured on a data dir of its own if own.
func throughputFixture(cfg config, events int64, own bool) throughputResult {
	run := func(path storagePath, writing, delivered float64, events int64) throughputRun {
		return throughputRun{path: path, writers: cfg.throughputWriters, watchers: cfg.throughputWatchers, updates: cfg.throughputUpdates,
			writing: ms(writing), delivered: ms(delivered), events: events,
			timedOut: events < int64(cfg.throughputWatchers*cfg.throughputUpdates)}
	}
	res := throughputResult{
		runs: []throughputRun{run(cachePath, 4140, 4170, 50000), run(etcdPath, 5270, 5510, events)},
		heap: heapPerObject{objects: cfg.objects, empty: 45.7 * (1 << 20), before: 120.3 * (1 << 20), after: 133.1 * (1 << 20)},
	}
	if own {
		res.heap.populate, res.heap.populatedFromOwn = populateStats{objects: cfg.objects, duration: ms(6880)}, true
	}
	return res
}

func informersFixture(watchListLists, listLists float64) informersResult {
	return informersResult{
		populate:  ms(2140),
		watchList: informerStats{mode: watchListMode, rounds: informerRounds(328.2, 160, 0.9, watchListLists, 6520, 6270, 6580), perSample: 0.9 * (1 << 20)},
		list:      informerStats{mode: listMode, rounds: informerRounds(328.2, 160, 0.9, listLists, 7130, 5820, 10520), perSample: 0.9 * (1 << 20)},
	}
}

// informerRounds are rounds with the given sync times (ms), each with 16
// watches, lists LISTs, a heap of baseMiB after GC and a peak growMiB above
// it (10 MiB more each round), reached halfway through its samples (then a
// GC), of which the sampler's scrapes made samplerMiB a sample.
func informerRounds(baseMiB, growMiB, samplerMiB, lists float64, syncs ...float64) []informerRound {
	var rs []informerRound
	for i, s := range syncs {
		peak := baseMiB + growMiB + float64(i)*10
		r := informerRound{sync: ms(s), baseline: baseMiB * (1 << 20), samples: 61 - i, lists: lists, watches: 16}
		for j := range r.samples {
			frac := float64(j) / float64(r.samples-1)
			heap := baseMiB + (peak-baseMiB)*2*frac
			if frac > 0.5 { // a GC, then steady
				heap = baseMiB + (peak-baseMiB)/5
			}
			r.series = append(r.series, heapPoint{at: time.Duration(frac * float64(ms(s))), bytes: heap * (1 << 20)})
		}
		r.netOfSampler(samplerMiB * (1 << 20))
		rs = append(rs, r)
	}
	return rs
}

// variantsReport exercises the other branches: server args, gzip off,
// paced updates, an etcd watch path skipped at the larger count, watchers
// that ended early, no CPU reading, snapshots that missed, informers that
// did not run as named, a stop that was killed and watches that ended
// oddly, an informer that relisted with EfficientWatchResumption on and
// none that did with it off.
func variantsReport() report {
	cfg := baseConfig("starts,pagination,watch,throughput,informers,stops,restarts")
	cfg.serverArgs = []string{"--feature-gates=APIListChunking=false"}
	cfg.gzip = false
	cfg.eventInterval = 5 * time.Millisecond
	cfg.watchers, cfg.etcdWatchersMax = []int{10, 50}, 10
	cfg.events = 20
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 61 * time.Second}
	r.empty = startStats{runs: []startRun{{ms(1206), ms(6.2)}, {ms(1500), ms(5)}}}
	r.populated = startStats{runs: []startRun{{ms(376), ms(10.9)}, {ms(327), ms(9)}}}
	r.populate = populateStats{objects: 10000, duration: ms(6880)}
	r.pagination = paginationFixture(cfg, 500, 594)
	ended := watchFixture("cache", 50, 20, 1, 3.8, 10.2, 22, 0, 1<<20)
	ended.latencies = ended.latencies[:900]
	ended.ended, ended.endErr, ended.timedOut, ended.cpu = 3, errors.New("the server ended the watch stream"), true, -1
	r.watch = []watchRun{
		watchFixture("cache", 10, 20, 1, 3.8, 10.2, 22, 100, 1<<20),
		watchFixture("etcd", 10, 20, 1, 9.8, 20.2, 42, 300, 4<<20),
		ended,
	}
	r.throughput = throughputFixture(cfg, 49990, true)
	r.informers = informersFixture(16, 0)
	cfg.stopWatches = 200
	r.cfg = cfg
	r.stops = stopsFixture(200, stopRun{killed: true, stop: 2 * time.Minute, bookmarked: 97, stray: 3,
		strayFirst: "[ERROR] (allowWatchBookmarks=false)", unended: 2})
	r.restarts = restartsFixture(1, 0)
	return r
}

// cacheOnlyWatchReport is a watch section without the etcd path at all.
func cacheOnlyWatchReport() report {
	cfg := baseConfig("watch")
	cfg.watchers, cfg.etcdWatchersMax = []int{100}, 0
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 9 * time.Second}
	r.watch = []watchRun{watchFixture("cache", 100, 1000, 1, 3.8, 10.2, 22, 3570, 133.5*1024*1000)}
	return r
}

// crdsFixture is the crds section with crs custom resources, of which the
// cache served fromCache of the one-request listings' requests, and the
// given start-to-ready times.
func crdsFixture(cfg config, crs int, fromCache float64, ready []time.Duration) crdsResult {
	var starts startStats
	for _, d := range ready {
		starts.runs = append(starts.runs, startRun{ready: d, stop: ms(45)})
	}
	v := crListVariants(cfg.page, benchCRD(0))
	pages := (crs + cfg.page - 1) / cfg.page
	size := crs * 1650
	cr := func(v listVariant, alloc float64, pages int, from float64, times ...float64) crListStats {
		return crListStats{listStats: listFixture(v, alloc, pages, size, times...), fromCache: from, requests: pages * cfg.lists}
	}
	return crdsResult{
		starts:   starts,
		populate: populateStats{objects: crs, duration: ms(11460)},
		cache: crListRun{path: cachePath, first: ms(1290), lists: []crListStats{
			cr(v[0], 54.1*(1<<20), 1, fromCache, 231, 212, 305),
			cr(v[1], 61.9*(1<<20), pages, float64(pages*cfg.lists), 452, 431, 520),
		}},
		etcd: crListRun{path: etcdPath, first: ms(1480), lists: []crListStats{
			cr(v[0], 531.7*(1<<20), 1, 0, 1320, 1250, 1410),
			cr(v[1], 524.2*(1<<20), pages, 0, 1610, 1540, 1700),
		}},
	}
}

// crdsOnlyReport is the crds section alone: no empty-data-dir start or
// ConfigMap LIST to compare with, a missed start target, custom resources
// fewer than -objects, and one-request LISTs that the cache left to etcd.
func crdsOnlyReport() report {
	cfg := baseConfig("crds")
	cfg.starts, cfg.lists, cfg.crs = 3, 3, 2000
	r := report{cfg: cfg, version: "miniapiserver v1.37.2", os: "linux", arch: "amd64", cpus: 2, elapsed: 61 * time.Second}
	r.crds = crdsFixture(cfg, 2000, 1, durations(6440, 6420, 6500))
	return r
}

func TestNetOfSamplerSubtractsTheScrapesSinceTheLastGC(t *testing.T) {
	const mib = 1 << 20
	r := informerRound{baseline: 100 * mib}
	// 110, 120, 130 MiB; a GC; 115, 150 MiB: at 150, two scrapes' garbage
	// (the one after the GC and its own) is on the heap, not five.
	for _, heap := range []float64{110, 120, 130, 115, 150} {
		r.series = append(r.series, heapPoint{bytes: heap * mib})
	}
	r.netOfSampler(4 * mib)
	if r.peak != 150*mib || r.growth() != 42*mib || r.sampler != 8*mib || r.rawGrowth() != 50*mib {
		t.Fatalf("peak %s, growth %s (raw %s), sampler %s; want 150 MiB, 42 MiB (raw 50 MiB), 8 MiB",
			fmtBytes(r.peak), fmtBytes(r.growth()), fmtBytes(r.rawGrowth()), fmtBytes(r.sampler))
	}
	// A growth the sampler alone explains is none.
	r = informerRound{baseline: 100 * mib, series: []heapPoint{{bytes: 101 * mib}, {bytes: 102 * mib}}}
	r.netOfSampler(4 * mib)
	if r.growth() != 0 {
		t.Fatalf("growth %s; want 0", fmtBytes(r.growth()))
	}
}
