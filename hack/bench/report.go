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
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

const (
	startTarget      = time.Second // start-to-ready median on an empty data dir
	rv0TimeTarget    = 3.0         // etcd/cache wall time of protobuf RV=0 LISTs, at least
	rv0AllocTarget   = 1.0         // etcd/cache server alloc of RV=0 LISTs, more than
	informerShare    = 1.0 / 3     // watch-list/LIST peak heap growth, at most
	perInformerBytes = 4 << 20     // watch-list peak heap growth per informer, at most
)

// report is everything one run measured; sections that did not run are
// zero.
type report struct {
	cfg        config
	version    string // "miniapiserver vX.Y.Z"
	os, arch   string // where it ran: runtime.GOOS and GOARCH
	cpus       int    // runtime.NumCPU
	empty      startStats
	populate   populateStats
	populated  startStats
	lists      []listStats // in listVariants order
	rv0        rv0Stats
	crds       crdsResult
	pagination paginationResult
	watch      []watchRun
	throughput throughputResult
	informers  informersResult
	admission  admissionResult
	envtests   envtestsResult
	rbac       rbacResult
	stops      []stopStats // watch cache, then etcd
	restarts   restartsResult
	upstream   *upstreamResult // with -upstream
	elapsed    time.Duration
}

// write prints the report as Markdown: a heading, then the body.
func (r report) write(w io.Writer) error {
	body, err := r.body()
	_, werr := fmt.Fprintf(w, "## %s benchmarks\n\n%s", r.version, body)
	return errors.Join(err, werr)
}

// body is the report below its heading, which is what -readme puts into
// the README: the summary line, then each section's paragraph (from
// prose.tmpl) and tables.
func (r report) body() (string, error) {
	var b markdown
	r.writeSummary(&b)
	r.writeUpstream(&b)
	r.writeResults(&b)
	r.writeRatios(&b)
	r.writeRV0Ratios(&b)
	r.writeCRDs(&b)
	r.writePagination(&b)
	r.writeWatch(&b)
	r.writeThroughput(&b)
	r.writeInformers(&b)
	r.writeAdmission(&b)
	r.writeEnvtests(&b)
	r.writeRBAC(&b)
	r.writeStops(&b)
	r.writeRestarts(&b)
	return b.String(), b.err
}

// markdown is the report being written. A paragraph whose template fails
// is left out and its error kept, so that the rest is still printed.
type markdown struct {
	strings.Builder
	err error // the first template failure
}

// paragraph writes the named paragraph of prose.tmpl for data, then a blank
// line.
func (b *markdown) paragraph(name string, data any) {
	var p strings.Builder
	if err := prose.ExecuteTemplate(&p, name, data); err != nil {
		if b.err == nil {
			b.err = fmt.Errorf("writing the %s paragraph: %w", name, err)
		}
		return
	}
	b.WriteString(p.String())
	b.WriteString("\n\n")
}

// writeSummary is the line above every table: what ran, where, and for how
// long.
func (r report) writeSummary(b *markdown) {
	p := summaryProse{
		Server: r.cfg.serverFlag, ServerArgs: r.cfg.serverArgs, OS: r.os, Arch: r.arch, CPUs: r.cpus,
		Sections: r.ranSections(), Gzip: r.cfg.gzip, Elapsed: r.elapsed.Round(time.Second),
	}
	if r.cfg.sections.has("starts") || r.cfg.sections.has("crds") {
		p.Starts = r.cfg.starts
	}
	if r.cfg.sections.has("lists") || r.cfg.sections.has("rv0") || r.cfg.sections.has("crds") {
		p.Lists = r.cfg.lists
	}
	b.paragraph("summary", p)
}

func (r report) ranSections() []string {
	var ran []string
	for _, name := range allSections {
		if r.cfg.sections.has(name) {
			ran = append(ran, name)
		}
	}
	return ran
}

// writeResults is the table of the starts, lists and rv0 sections.
func (r report) writeResults(b *markdown) {
	if len(r.empty.runs) == 0 && len(r.lists) == 0 && len(r.rv0.cache) == 0 {
		return
	}
	b.WriteString("| benchmark | variant | median | min | max | server alloc/op | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	objects := fmtCount(r.cfg.objects) + " ConfigMaps"
	if len(r.empty.runs) > 0 {
		met := "met"
		if median(r.empty.readyTimes()) > startTarget {
			met = "**missed**"
		}
		writeRow(b, "start-to-ready", "empty data dir", r.empty.readyTimes(), "–",
			fmt.Sprintf("target ≤ %g s median: %s; %s", startTarget.Seconds(), met, stopNote(r.empty)))
		writeRow(b, "start-to-ready", objects, r.populated.readyTimes(), "–",
			fmt.Sprintf("%s; populated by %d clients in %s (%.0f creates/s)", stopNote(r.populated),
				r.cfg.workers, fmtDuration(r.populate.duration), float64(r.populate.objects)/r.populate.duration.Seconds()))
	}
	for _, l := range r.lists {
		writeRow(b, "LIST "+objects, l.variant.String(), l.times, fmtBytes(l.allocPerOp),
			fmt.Sprintf("%d page(s), %s uncompressed", l.shape.pages, fmtBytes(float64(l.shape.bytes))))
	}
	for i := range r.rv0.cache {
		for _, p := range []struct {
			path storagePath
			l    listStats
		}{{cachePath, r.rv0.cache[i]}, {etcdPath, r.rv0.etcd[i]}} {
			writeRow(b, "LIST RV=0 "+objects, p.l.variant.encoding+", "+p.path.name, p.l.times, fmtBytes(p.l.allocPerOp),
				fmt.Sprintf("`%s`; %s uncompressed", strings.Join(p.path.args, " "), fmtBytes(float64(p.l.shape.bytes))))
		}
	}
	b.WriteString("\n")
}

func writeRow(b *markdown, bench, variant string, times []time.Duration, alloc, note string) {
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", bench, variant,
		fmtDuration(median(times)), fmtDuration(slices.Min(times)), fmtDuration(slices.Max(times)), alloc, note)
}

func (r report) writeRatios(b *markdown) {
	if len(r.lists) == 0 {
		return
	}
	jsonOne, jsonPaged, protoOne, protoPaged := r.lists[0], r.lists[1], r.lists[2], r.lists[3]
	b.WriteString("| LIST ratio (of medians) | wall time | server alloc |\n")
	b.WriteString("|---|---|---|\n")
	writeRatio(b, fmt.Sprintf("JSON: paged (limit %d) / one request", r.cfg.page), jsonPaged, jsonOne)
	writeRatio(b, fmt.Sprintf("protobuf: paged (limit %d) / one request", r.cfg.page), protoPaged, protoOne)
	writeRatio(b, "one request: protobuf / JSON", protoOne, jsonOne)
	writeRatio(b, fmt.Sprintf("paged (limit %d): protobuf / JSON", r.cfg.page), protoPaged, jsonPaged)
	b.WriteString("\n")
}

func writeRatio(b *markdown, label string, num, den listStats) {
	fmt.Fprintf(b, "| %s | %s | %s |\n", label, fmtRatio(listTimeRatio(num, den)), fmtRatio(num.allocPerOp/den.allocPerOp))
}

func listTimeRatio(num, den listStats) float64 {
	return median(num.times).Seconds() / median(den.times).Seconds()
}

// writeRV0Ratios compares the RV=0 listings from etcd with those from the
// cache, against the targets.
func (r report) writeRV0Ratios(b *markdown) {
	if len(r.rv0.cache) == 0 {
		return
	}
	b.WriteString("| LIST RV=0 ratio (of medians) | wall time | server alloc | note |\n")
	b.WriteString("|---|---|---|---|\n")
	for i, cache := range r.rv0.cache {
		etcd := r.rv0.etcd[i]
		timeRatio, allocRatio := listTimeRatio(etcd, cache), etcd.allocPerOp/cache.allocPerOp
		met := allocRatio > rv0AllocTarget
		target := fmt.Sprintf("target > %g× alloc", rv0AllocTarget)
		if cache.variant.accept == acceptProtobuf {
			met = met && timeRatio >= rv0TimeTarget
			target = fmt.Sprintf("target ≥ %g× wall time and > %g× alloc", rv0TimeTarget, rv0AllocTarget)
		}
		fmt.Fprintf(b, "| %s: etcd / cache | %s | %s | %s: %s |\n", cache.variant.encoding,
			fmtRatio(timeRatio), fmtRatio(allocRatio), target, metNote(met))
	}
	b.WriteString("\n")
	r.writeUpstreamRV0(b)
}

// writeUpstreamRV0 is the RV=0 LISTs side by side with kube-apiserver:
// both servers' medians and miniapiserver's over upstream's.
func (r report) writeUpstreamRV0(b *markdown) {
	if r.upstream == nil || len(r.upstream.rv0) == 0 {
		return
	}
	u := r.upstream
	p := rv0UpstreamProse{FromLists: u.rv0FromLists, Objects: r.cfg.objects, Runs: r.cfg.lists, Workers: r.cfg.workers,
		Populate: u.populate.duration, AllocMetric: allocBytesTotal, RouteMetric: cacheListRequests,
		UpstreamRouteMetric: upstreamListsTotal, Gzip: r.cfg.gzip}
	b.paragraph("rv0-upstream", p)
	fmt.Fprintf(b, "| vs kube-apiserver: LIST RV=0 %s ConfigMaps | miniapiserver (cache) median | kube-apiserver median | ours / upstream "+
		"| miniapiserver alloc/op | kube-apiserver + etcd alloc/op | ours / upstream alloc | from the watch cache: ours; upstream's |\n", fmtCount(r.cfg.objects))
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, p := range u.rv0 {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s; %s |\n", p.ours.variant.encoding,
			fmtDuration(median(p.ours.times)), fmtDuration(median(p.upstream.times)), fmtRatio(listTimeRatio(p.ours, p.upstream)),
			fmtBytes(p.ours.allocPerOp), fmtBytes(p.upstream.allocPerOp), fmtRatio(p.ours.allocPerOp/p.upstream.allocPerOp),
			fromCacheNote(p.fromCache[0], p.requests[0]), fromCacheNote(p.fromCache[1], p.requests[1]))
	}
	b.WriteString("\n")
}

func metNote(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

func stopNote(st startStats) string {
	return "SIGTERM→exit median " + fmtDuration(median(st.stopTimes()))
}
