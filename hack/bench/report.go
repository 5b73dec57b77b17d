package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

const (
	startTarget      = time.Second // start-to-ready median on an empty data dir
	rv0TimeTarget    = 3.0         // etcd/cache wall time of protobuf RV=0 LISTs, at least
	rv0AllocTarget   = 1.0         // etcd/cache server alloc of RV=0 LISTs, more than
	informerShare    = 0.2         // watch-list/LIST peak heap growth, at most
	perInformerBytes = 4 << 20     // watch-list peak heap growth per informer, at most
)

// report is everything one run measured; sections that did not run are
// zero.
type report struct {
	cfg        config
	version    string // "miniapiserver vX.Y.Z"
	empty      startStats
	populate   populateStats
	populated  startStats
	lists      []listStats // in listVariants order
	rv0        rv0Stats
	pagination paginationResult
	watch      []watchRun
	informers  informersResult
	elapsed    time.Duration
}

// write prints the report as Markdown.
func (r report) write(w io.Writer) error {
	var b strings.Builder
	r.writeHeader(&b)
	r.writeResults(&b)
	r.writeRatios(&b)
	r.writeRV0Ratios(&b)
	r.writePagination(&b)
	r.writeWatch(&b)
	r.writeInformers(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r report) writeHeader(b *strings.Builder) {
	fmt.Fprintf(b, "## %s benchmarks\n\n", r.version)
	var parts []string
	if r.cfg.sections.has("starts") {
		parts = append(parts, fmt.Sprintf("%d starts per data dir", r.cfg.starts))
	}
	if r.cfg.sections.has("lists") || r.cfg.sections.has("rv0") {
		parts = append(parts, fmt.Sprintf("%d timed listings per LIST variant, %s", r.cfg.lists, gzipNote(r.cfg.gzip)))
	}
	fmt.Fprintf(b, "`%s`%s on %s/%s with %d CPUs; sections %s; %srun took %s.\n\n",
		r.cfg.server, argsNote(r.cfg.serverArgs), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		strings.Join(r.ranSections(), ", "), strings.Join(append(parts, ""), "; "), r.elapsed.Round(time.Second))
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

func gzipNote(gzip bool) string {
	if gzip {
		return "client accepts gzip (client-go's default), so large responses are compressed"
	}
	return "gzip disabled (-gzip=false)"
}

func argsNote(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " `" + strings.Join(args, " ") + "`"
}

// writeResults is the table of the starts, lists and rv0 sections.
func (r report) writeResults(b *strings.Builder) {
	if len(r.empty.runs) == 0 && len(r.lists) == 0 && len(r.rv0.cache) == 0 {
		return
	}
	b.WriteString("| benchmark | variant | median | min | max | server alloc/op | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	objects := fmtCount(r.cfg.objects) + " ConfigMaps"
	if len(r.empty.runs) > 0 {
		met := "met"
		if median(readyTimes(r.empty)) > startTarget {
			met = "**missed**"
		}
		writeRow(b, "start-to-ready", "empty data dir", readyTimes(r.empty), "–",
			fmt.Sprintf("target ≤ %g s median: %s; %s", startTarget.Seconds(), met, stopNote(r.empty)))
		writeRow(b, "start-to-ready", objects, readyTimes(r.populated), "–",
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

func writeRow(b *strings.Builder, bench, variant string, times []time.Duration, alloc, note string) {
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", bench, variant,
		fmtDuration(median(times)), fmtDuration(slices.Min(times)), fmtDuration(slices.Max(times)), alloc, note)
}

func (r report) writeRatios(b *strings.Builder) {
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

func writeRatio(b *strings.Builder, label string, num, den listStats) {
	fmt.Fprintf(b, "| %s | %s | %s |\n", label, fmtRatio(listTimeRatio(num, den)), fmtRatio(num.allocPerOp/den.allocPerOp))
}

func listTimeRatio(num, den listStats) float64 {
	return median(num.times).Seconds() / median(den.times).Seconds()
}

// writeRV0Ratios compares the RV=0 listings from etcd with those from the
// cache, against the targets.
func (r report) writeRV0Ratios(b *strings.Builder) {
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
}

func metNote(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

func readyTimes(st startStats) []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.ready
	}
	return times
}

func stopNote(st startStats) string {
	stops := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		stops[i] = run.stop
	}
	return "SIGTERM→exit median " + fmtDuration(median(stops))
}
