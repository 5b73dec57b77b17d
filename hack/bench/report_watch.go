package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// writeWatch is the watch fan-out table and its ratios.
func (r report) writeWatch(b *markdown) {
	if len(r.watch) == 0 {
		return
	}
	b.paragraph("watch", watchProse{
		Namespace: namespace, PerConn: r.cfg.watchersPerConn, Events: r.cfg.events, Interval: r.cfg.eventInterval,
		AllocMetric: allocBytesTotal, Watchers: r.cfg.watchers, EtcdSkipped: r.etcdSkipped(), EtcdMax: r.cfg.etcdWatchersMax,
	})
	b.WriteString("| watch fan-out | variant | latency p50 | p99 | max | server CPU/delivery | server alloc/delivery | server alloc/event | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.watch {
		fmt.Fprintf(b, "| %s watchers × %s events | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			fmtCount(run.watchers), fmtCount(run.events), run.path,
			fmtDuration(percentile(run.latencies, 0.5)), fmtDuration(percentile(run.latencies, 0.99)),
			fmtDuration(percentile(run.latencies, 1)), cpuPerDelivery(run),
			allocPer(run.allocBytes, run.deliveries()), allocPer(run.allocBytes, run.events), watchNote(run))
	}
	b.WriteString("\n")
	r.writeWatchRatios(b)
}

// etcdSkipped are the watcher counts that ran with the watch cache only.
func (r report) etcdSkipped() []int {
	var skipped []int
	for _, n := range r.cfg.watchers {
		if n > r.cfg.etcdWatchersMax {
			skipped = append(skipped, n)
		}
	}
	return skipped
}

func cpuPerDelivery(run watchRun) string {
	if run.cpu < 0 || run.deliveries() == 0 {
		return "–"
	}
	return fmtDuration(run.cpu / time.Duration(run.deliveries()))
}

func allocPer(bytes float64, n int) string {
	if n == 0 {
		return "–"
	}
	return fmtBytes(bytes / float64(n))
}

func watchNote(run watchRun) string {
	want := run.watchers * run.events
	var note []string
	if run.deliveries() < want || run.timedOut || run.ended > 0 {
		note = append(note, "**incomplete**")
	}
	note = append(note, fmt.Sprintf("%s of %s deliveries", fmtCount(run.deliveries()), fmtCount(want)))
	if run.ended > 0 {
		reason := run.endErr.Error()
		if errors.Is(run.endErr, context.Canceled) {
			reason = fmt.Sprintf("no last event %s after it was written", deliveryTimeout)
		}
		note = append(note, fmt.Sprintf("%d watchers ended early (%.120s)", run.ended, reason))
	}
	note = append(note, fmt.Sprintf("%d connection(s)", run.conns),
		fmt.Sprintf("updates took %s (%.0f/s)", fmtDuration(run.writing), float64(run.events)/run.writing.Seconds()))
	if run.cpu >= 0 {
		note = append(note, "server CPU "+fmtDuration(run.cpu))
	}
	return strings.Join(note, "; ")
}

// writeWatchRatios compares etcd with the cache at each watcher count, and
// each path's largest watcher count with its smallest.
func (r report) writeWatchRatios(b *markdown) {
	type key struct {
		path     string
		watchers int
	}
	runs := map[key]watchRun{}
	for _, run := range r.watch {
		runs[key{run.path, run.watchers}] = run
	}
	var rows []string
	for _, n := range r.cfg.watchers {
		cache, okCache := runs[key{cachePath.name, n}]
		etcd, okEtcd := runs[key{etcdPath.name, n}]
		if okCache && okEtcd {
			rows = append(rows, watchRatioRow(fmt.Sprintf("%s watchers: etcd / cache", fmtCount(n)), etcd, cache, ""))
		}
	}
	if lo, hi := r.cfg.watchers[0], r.cfg.watchers[len(r.cfg.watchers)-1]; lo != hi {
		for _, path := range []string{cachePath.name, etcdPath.name} {
			small, okSmall := runs[key{path, lo}]
			large, okLarge := runs[key{path, hi}]
			if okSmall && okLarge {
				rows = append(rows, watchRatioRow(fmt.Sprintf("%s: %s / %s watchers", path, fmtCount(hi), fmtCount(lo)), large, small,
					"alloc and CPU per delivery should stay flat (≈ 1×) as watchers grow"))
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("| watch fan-out ratio | latency p50 | latency p99 | server CPU/delivery | server alloc/delivery | note |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, ""))
	b.WriteString("\n")
}

func watchRatioRow(label string, num, den watchRun, note string) string {
	durRatio := func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
	cpu := "–"
	if num.cpu >= 0 && den.cpu >= 0 {
		cpu = fmtRatio((num.cpu.Seconds() / float64(num.deliveries())) / (den.cpu.Seconds() / float64(den.deliveries())))
	}
	if note == "" {
		note = "–"
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s |\n", label,
		fmtRatio(durRatio(percentile(num.latencies, 0.5), percentile(den.latencies, 0.5))),
		fmtRatio(durRatio(percentile(num.latencies, 0.99), percentile(den.latencies, 0.99))),
		cpu, fmtRatio((num.allocBytes/float64(num.deliveries()))/(den.allocBytes/float64(den.deliveries()))), note)
}
