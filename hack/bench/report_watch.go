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
		Upstream: r.upstream != nil && len(r.upstream.watch) > 0,
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
	r.writeUpstreamWatch(b)
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
	if incomplete(run) {
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

// Target against upstream: how many times lower miniapiserver's p99
// delivery latency should be than kube-apiserver's, at
// upstreamWatchTargetWatchers watchers.
const (
	upstreamWatchP99Target      = 1.5
	upstreamWatchTargetWatchers = 1000
)

// watchPair is miniapiserver's watch cache run and kube-apiserver's at one
// watcher count.
type watchPair struct{ ours, upstream watchRun }

// upstreamWatchPairs pairs the cache runs with upstream's by watcher count.
func (r report) upstreamWatchPairs() []watchPair {
	if r.upstream == nil {
		return nil
	}
	var pairs []watchPair
	for _, u := range r.upstream.watch {
		for _, run := range r.watch {
			if run.path == cachePath.name && run.watchers == u.watchers {
				pairs = append(pairs, watchPair{run, u})
			}
		}
	}
	return pairs
}

// writeUpstreamWatch is a row per server and watcher count with the
// absolute figures, then the ratios of miniapiserver's over upstream's.
func (r report) writeUpstreamWatch(b *markdown) {
	pairs := r.upstreamWatchPairs()
	if len(pairs) == 0 {
		return
	}
	b.WriteString("| vs kube-apiserver: watch fan-out | server | latency p50 | p99 | max | server CPU/delivery | server alloc/delivery " +
		"| its etcd: CPU; alloc per event | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range pairs {
		bench := fmt.Sprintf("%s watchers × %s events", fmtCount(p.ours.watchers), fmtCount(p.ours.events))
		for _, row := range []struct {
			server, etcd string
			run          watchRun
		}{
			{"miniapiserver (watch cache)", "embedded: in the server's figures", p.ours},
			{"kube-apiserver (its watch cache)", etcdPerEvent(p.upstream), p.upstream},
		} {
			run := row.run
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", bench, row.server,
				fmtDuration(percentile(run.latencies, 0.5)), fmtDuration(percentile(run.latencies, 0.99)),
				fmtDuration(percentile(run.latencies, 1)), cpuPerDelivery(run), allocPer(run.allocBytes, run.deliveries()),
				row.etcd, watchNote(run))
		}
	}
	b.WriteString("\n| watch fan-out: ours / upstream | latency p50 | latency p99 | CPU/delivery (upstream: kube-apiserver + etcd) " +
		"| alloc/delivery (upstream: kube-apiserver + etcd) | note |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, p := range pairs {
		ours, up := p.ours, p.upstream
		p99 := percentile(ours.latencies, 0.99).Seconds() / percentile(up.latencies, 0.99).Seconds()
		cpu := "–"
		if ours.cpu >= 0 && up.cpu >= 0 && up.etcdCPU >= 0 {
			cpu = fmtRatio(perDelivery(ours.cpu.Seconds(), ours) / perDelivery((up.cpu+up.etcdCPU).Seconds(), up))
		}
		note := fmt.Sprintf("target p99 ≥ %g× lower (≤ %.2f×): %s", upstreamWatchP99Target, 1/upstreamWatchP99Target,
			metNote(p99 <= 1/upstreamWatchP99Target))
		if ours.watchers != upstreamWatchTargetWatchers {
			note += fmt.Sprintf(" (the target is for %s watchers)", fmtCount(upstreamWatchTargetWatchers))
		}
		if incomplete(ours) || incomplete(up) {
			note += "; **a run is incomplete** (its note says how)"
		}
		fmt.Fprintf(b, "| %s watchers | %s | %s | %s | %s | %s |\n", fmtCount(ours.watchers),
			fmtRatio(percentile(ours.latencies, 0.5).Seconds()/percentile(up.latencies, 0.5).Seconds()), fmtRatio(p99), cpu,
			fmtRatio(perDelivery(ours.allocBytes, ours)/perDelivery(up.allocBytes+up.etcdAlloc, up)), note)
	}
	b.WriteString("\n")
}

// etcdPerEvent is upstream's etcd's CPU time and bytes allocated per timed
// update: it stores each once and sends it to kube-apiserver's watch cache
// once, whatever the watchers.
func etcdPerEvent(run watchRun) string {
	cpu := "–"
	if run.etcdCPU >= 0 && run.events > 0 {
		cpu = fmtDuration(run.etcdCPU / time.Duration(run.events))
	}
	return cpu + "; " + allocPer(run.etcdAlloc, run.events)
}

func perDelivery(x float64, run watchRun) float64 { return x / float64(run.deliveries()) }

func incomplete(run watchRun) bool {
	return run.deliveries() < run.watchers*run.events || run.timedOut || run.ended > 0
}
