package main

import (
	"fmt"
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
