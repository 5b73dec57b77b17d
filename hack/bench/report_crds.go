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
	"time"
)

const crdStartTarget = time.Second // start-to-ready median with -crds CRDs to install

// writeCRDs is the crds section: its starts and listings, and the
// etcd/cache ratios.
func (r report) writeCRDs(b *markdown) {
	c := r.crds
	if len(c.starts.runs) == 0 {
		return
	}
	b.paragraph("crds", crdsProse{
		CRDs: r.cfg.crds, CRs: c.populate.objects, Payload: payloadSize, Namespace: namespace,
		Workers: r.cfg.workers, Populate: c.populate.duration, Limit: r.cfg.page, Runs: r.cfg.lists,
		AllocMetric: allocBytesTotal, RouteMetric: cacheListRequests, Gzip: r.cfg.gzip, NoCRD: len(r.empty.runs) > 0,
	})
	r.writeCRDResults(b)
	r.writeCRDRatios(b)
	r.writeUpstreamCRDs(b)
}

// writeUpstreamCRDs is the crds section side by side with kube-apiserver:
// its paragraph, then a table of starts and one of LISTs.
func (r report) writeUpstreamCRDs(b *markdown) {
	u := r.crds.upstream
	if u == nil || len(u.starts) == 0 {
		return
	}
	b.paragraph("crds-upstream", crdsUpstreamProse{
		CRDs: r.cfg.crds, Setup: u.setup, Poll: readyzPoll, CRs: u.populate.objects, Workers: r.cfg.workers,
		Populate: u.populate.duration, Runs: r.cfg.lists, AllocMetric: allocBytesTotal,
		RouteMetric: cacheListRequests, UpstreamRouteMetric: upstreamListsTotal,
	})
	ours := r.crds.starts
	b.WriteString("| vs kube-apiserver: custom resources | miniapiserver median | kube-apiserver median | ours / upstream | note |\n")
	b.WriteString("|---|---|---|---|---|\n")
	ready := [2]time.Duration{median(ours.readyTimes()), median(u.servedTimes())}
	fmt.Fprintf(b, "| start-to-ready, %d CRDs | %s | %s | %s | ours: exec→ready line, fresh data dir, `--crds`; "+
		"upstream: etcd's exec→every CRD in discovery, etcd holding the CRDs (its /readyz: median %s, min %s, max %s) |\n",
		r.cfg.crds, fmtDuration(ready[0]), fmtDuration(ready[1]), fmtRatio(1/ratioOf(ready)),
		fmtDuration(median(u.readyzTimes())), fmtDuration(slices.Min(u.readyzTimes())), fmtDuration(slices.Max(u.readyzTimes())))
	stop := [2]time.Duration{median(ours.stopTimes()), median(u.stopTimes())}
	fmt.Fprintf(b, "| SIGTERM→exit after it | %s | %s | %s | upstream: kube-apiserver's, then etcd's |\n",
		fmtDuration(stop[0]), fmtDuration(stop[1]), fmtRatio(1/ratioOf(stop)))
	b.WriteString("\n")
	fmt.Fprintf(b, "| vs kube-apiserver: LIST %s custom resources | miniapiserver (cache) median | kube-apiserver median | ours / upstream "+
		"| miniapiserver alloc/op | kube-apiserver + etcd alloc/op | ours / upstream alloc | from the watch cache: ours; upstream's |\n",
		fmtCount(u.populate.objects))
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, p := range u.lists {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s; %s |\n", p.ours.variant.String(),
			fmtDuration(median(p.ours.times)), fmtDuration(median(p.upstream.times)), fmtRatio(listTimeRatio(p.ours, p.upstream)),
			fmtBytes(p.ours.allocPerOp), fmtBytes(p.upstream.allocPerOp), fmtRatio(p.ours.allocPerOp/p.upstream.allocPerOp),
			fromCacheNote(p.fromCache[0], p.requests[0]), fromCacheNote(p.fromCache[1], p.requests[1]))
	}
	b.WriteString("\n")
}

func (r report) writeCRDResults(b *markdown) {
	c := r.crds
	b.WriteString("| custom resources | variant | median | min | max | server alloc/op | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	withCRDs := median(c.starts.readyTimes())
	note := fmt.Sprintf("target ≤ %g s median: %s", crdStartTarget.Seconds(), metNote(withCRDs <= crdStartTarget))
	if len(r.empty.runs) > 0 {
		noCRD := median(r.empty.readyTimes())
		writeRow(b, "start-to-ready", "empty data dir, no CRD", r.empty.readyTimes(), "–", "the starts section's, for comparison")
		note += fmt.Sprintf("; %s over no CRD (of medians)", fmtDelta(withCRDs-noCRD))
	}
	writeRow(b, "start-to-ready", fmt.Sprintf("empty data dir, %d CRDs", r.cfg.crds), c.starts.readyTimes(), "–",
		note+"; "+stopNote(c.starts))
	for _, run := range []crListRun{c.cache, c.etcd} {
		fmt.Fprintf(b, "| first LIST after the start | JSON, one request, %s | %s | – | – | – | %s |\n",
			run.path.name, fmtDuration(run.first), firstListNote(run.path))
	}
	bench := fmt.Sprintf("LIST %s custom resources", fmtCount(c.populate.objects))
	for i := range c.cache.lists {
		cache, etcd := c.cache.lists[i], c.etcd.lists[i]
		note := crShapeNote(cache) + "; " + cacheServedNote(cache)
		if i == 0 {
			note += fmt.Sprintf("; populated by %d clients in %s (%.0f creates/s)", r.cfg.workers,
				fmtDuration(c.populate.duration), float64(c.populate.objects)/c.populate.duration.Seconds())
		}
		writeRow(b, bench, cache.variant.String()+", cache", cache.times, fmtBytes(cache.allocPerOp), note)
		writeRow(b, bench, etcd.variant.String()+", etcd", etcd.times, fmtBytes(etcd.allocPerOp),
			flagsNote(etcdPath)+"; "+crShapeNote(etcd))
	}
	b.WriteString("\n")
}

// writeCRDRatios compares etcd with the cache and, when the lists section
// listed as many ConfigMaps, custom resources with ConfigMaps.
func (r report) writeCRDRatios(b *markdown) {
	c := r.crds
	b.WriteString("| custom resources ratio (of medians) | wall time | server alloc |\n")
	b.WriteString("|---|---|---|\n")
	for i, cache := range c.cache.lists {
		writeRatio(b, cache.variant.String()+": etcd / cache", c.etcd.lists[i].listStats, cache.listStats)
	}
	if len(r.lists) > 0 && r.cfg.objects == c.populate.objects {
		writeRatio(b, "JSON, one request, cache: custom resources / ConfigMaps (lists section)",
			c.cache.lists[0].listStats, r.lists[0])
	}
	b.WriteString("\n")
}

func firstListNote(path storagePath) string {
	if path.name == cachePath.name {
		return "one sample: creates the storage and fills the watch cache from etcd"
	}
	return flagsNote(path) + "; one sample: creates the storage"
}

func crShapeNote(st crListStats) string {
	return fmt.Sprintf("%s page(s), %s uncompressed", fmtCount(st.shape.pages), fmtBytes(float64(st.shape.bytes)))
}

// cacheServedNote says how many of the timed requests the watch cache
// served, in bold when some went to etcd.
func cacheServedNote(st crListStats) string {
	note := fmt.Sprintf("%s of %s requests from the cache", fmtCount(int(st.fromCache)), fmtCount(st.requests))
	if int(st.fromCache) != st.requests {
		return "**" + note + "**"
	}
	return note
}

// fmtDelta is a signed duration: "+434 ms", "−12.0 ms".
func fmtDelta(d time.Duration) string {
	if d < 0 {
		return "−" + fmtDuration(-d)
	}
	return "+" + fmtDuration(d)
}
