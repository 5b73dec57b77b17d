package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

const startTarget = time.Second // start-to-ready median on an empty data dir

// report is everything one run measured.
type report struct {
	cfg       config
	empty     startStats
	populate  populateStats
	populated startStats
	lists     []listStats // in listVariants order
	elapsed   time.Duration
}

// write prints the report as Markdown.
func (r report) write(w io.Writer) error {
	var b strings.Builder
	r.writeHeader(&b)
	r.writeResults(&b)
	r.writeRatios(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r report) writeHeader(b *strings.Builder) {
	fmt.Fprintf(b, "## %s benchmarks\n\n", r.empty.version)
	fmt.Fprintf(b, "`%s`%s on %s/%s with %d CPUs; %d starts per data dir; %d timed listings per LIST variant, %s; run took %s.\n\n",
		r.cfg.server, argsNote(r.cfg.serverArgs), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		r.cfg.starts, r.cfg.lists, gzipNote(r.cfg.gzip), r.elapsed.Round(time.Second))
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

func (r report) writeResults(b *strings.Builder) {
	b.WriteString("| benchmark | variant | median | min | max | server alloc/op | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	objects := fmtCount(r.cfg.objects) + " ConfigMaps"
	met := "met"
	if median(readyTimes(r.empty)) > startTarget {
		met = "**missed**"
	}
	writeRow(b, "start-to-ready", "empty data dir", readyTimes(r.empty), "–",
		fmt.Sprintf("target ≤ %g s median: %s; %s", startTarget.Seconds(), met, stopNote(r.empty)))
	writeRow(b, "start-to-ready", objects, readyTimes(r.populated), "–",
		fmt.Sprintf("%s; populated by %d clients in %s (%.0f creates/s)", stopNote(r.populated),
			r.cfg.workers, fmtDuration(r.populate.duration), float64(r.populate.objects)/r.populate.duration.Seconds()))
	for _, l := range r.lists {
		writeRow(b, "LIST "+objects, l.variant.String(), l.times, fmtBytes(l.allocPerOp),
			fmt.Sprintf("%d page(s), %s uncompressed", l.shape.pages, fmtBytes(float64(l.shape.bytes))))
	}
	b.WriteString("\n")
}

func writeRow(b *strings.Builder, bench, variant string, times []time.Duration, alloc, note string) {
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", bench, variant,
		fmtDuration(median(times)), fmtDuration(slices.Min(times)), fmtDuration(slices.Max(times)), alloc, note)
}

func (r report) writeRatios(b *strings.Builder) {
	jsonOne, jsonPaged, protoOne, protoPaged := r.lists[0], r.lists[1], r.lists[2], r.lists[3]
	b.WriteString("| LIST ratio (of medians) | wall time | server alloc |\n")
	b.WriteString("|---|---|---|\n")
	writeRatio(b, fmt.Sprintf("JSON: paged (limit %d) / one request", r.cfg.page), jsonPaged, jsonOne)
	writeRatio(b, fmt.Sprintf("protobuf: paged (limit %d) / one request", r.cfg.page), protoPaged, protoOne)
	writeRatio(b, "one request: protobuf / JSON", protoOne, jsonOne)
	writeRatio(b, fmt.Sprintf("paged (limit %d): protobuf / JSON", r.cfg.page), protoPaged, jsonPaged)
}

func writeRatio(b *strings.Builder, label string, num, den listStats) {
	timeRatio := median(num.times).Seconds() / median(den.times).Seconds()
	fmt.Fprintf(b, "| %s | %.2f× | %.2f× |\n", label, timeRatio, num.allocPerOp/den.allocPerOp)
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

// median of a non-empty sample; the mean of the middle two for even sizes.
func median(times []time.Duration) time.Duration {
	sorted := slices.Sorted(slices.Values(times))
	mid := len(sorted) / 2
	if len(sorted)%2 == 0 {
		return (sorted[mid-1] + sorted[mid]) / 2
	}
	return sorted[mid]
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0f ms", d.Seconds()*1e3)
	default:
		return fmt.Sprintf("%.1f ms", d.Seconds()*1e3)
	}
}

func fmtBytes(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	default:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	}
}

// fmtCount writes n with thousands separators: 10000 → "10,000".
func fmtCount(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
