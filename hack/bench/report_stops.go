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
	"time"
)

const (
	stopTarget        = 100 * time.Millisecond // SIGTERM→exit median with stopTargetWatches open
	stopTargetWatches = 1000
)

// writeStops is the table of the stops section.
func (r report) writeStops(b *markdown) {
	if len(r.stops) == 0 {
		return
	}
	upstream := r.upstream != nil && len(r.upstream.stops.runs) > 0
	b.paragraph("stops", stopsProse{
		Watches: r.cfg.stopWatches, Namespace: namespace, PerConn: r.cfg.watchersPerConn, OpenMetric: longRunning,
		Rounds: r.cfg.stopRounds, KillAfter: stopKillAfter, Upstream: upstream, UpstreamShutdownTimeout: upstreamShutdownTimeout,
	})
	b.WriteString("| stop with open watches | variant | SIGTERM→exit median | min | max | final BOOKMARKs per round | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, st := range r.stops {
		times := st.stopTimes()
		bench := fmtCount(st.watches) + " watches"
		if st.watches == 0 {
			bench = "no watch, 1 idle connection"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", bench, st.path.name,
			fmtDuration(median(times)), fmtDuration(slices.Min(times)), fmtDuration(slices.Max(times)),
			bookmarkCell(st), r.stopsNote(st))
	}
	b.WriteString("\n")
	if upstream {
		r.writeUpstreamStops(b)
	}
}

// upstreamShutdownTimeout is how long kube-apiserver's HTTP server waits
// for open requests on shutdown: its --request-timeout default.
const upstreamShutdownTimeout = time.Minute

// writeUpstreamStops is a row per server with watches open, then the
// ratios of miniapiserver's medians over kube-apiserver's.
func (r report) writeUpstreamStops(b *markdown) {
	up := r.upstream.stops
	var ours []stopStats
	for _, st := range r.stops {
		if st.watches > 0 {
			ours = append(ours, st)
		}
	}
	fmt.Fprintf(b, "| vs kube-apiserver: stop with %s open watches | server | SIGTERM→exit median | min | max | final BOOKMARKs per round | note |\n",
		fmtCount(up.watches))
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, st := range append(ours, up) {
		times := st.stopTimes()
		server := "miniapiserver `" + strings.Join(st.path.args, " ") + "`"
		note := strings.Join(stopAnomalies(st), "; ")
		if st.upstream {
			server = "kube-apiserver (its etcd not included)"
			note = strings.Join(append([]string{"its defaults `--shutdown-delay-duration=0s --shutdown-watch-termination-grace-period=0s`"},
				stopAnomalies(st)...), "; ")
		}
		fmt.Fprintf(b, "| %s watches | %s | %s | %s | %s | %s | %s |\n", fmtCount(st.watches), server,
			fmtDuration(median(times)), fmtDuration(slices.Min(times)), fmtDuration(slices.Max(times)), bookmarkCell(st), note)
	}
	b.WriteString("\n| stops: ours / upstream (of medians) | SIGTERM→exit | note |\n")
	b.WriteString("|---|---|---|\n")
	for _, st := range ours {
		ratio := median(st.stopTimes()).Seconds() / median(up.stopTimes()).Seconds()
		fmt.Fprintf(b, "| %s watches: miniapiserver `%s` / kube-apiserver | %s | kube-apiserver takes %s as long; "+
			"no target against upstream; miniapiserver's own %s |\n",
			fmtCount(st.watches), strings.Join(st.path.args, " "), fmtSmallRatio(ratio), fmtTimes(1/ratio), stopTargetNote(st))
	}
	b.WriteString("\n")
}

// bookmarkCell is how many of the watches that allow bookmarks got a final
// one, per round; bold where the watch cache left some without.
func bookmarkCell(st stopStats) string {
	if st.watches == 0 {
		return "–"
	}
	var got []int
	for _, run := range st.runs {
		got = append(got, run.bookmarked)
	}
	cell := fmt.Sprintf("%s of %s", fmtIntRange(got), fmtCount(st.runs[0].bookmarkable))
	switch {
	case st.upstream && slices.Max(got) > 0:
		return cell + " (periodic ones, not final)"
	case st.path.name == etcdPath.name && slices.Max(got) == 0:
		return cell + " (none expected)"
	case st.path.name == cachePath.name && slices.Min(got) < st.runs[0].bookmarkable:
		return "**" + cell + "**"
	}
	return cell
}

// stopsNote checks the target and flags kills, streams that outlived the
// server and unexpected events.
func (r report) stopsNote(st stopStats) string {
	target := stopTargetNote(st)
	if st.watches == 0 {
		target = "control: one idle client connection, no watch"
	}
	note := append([]string{target, "`" + strings.Join(st.path.args, " ") + "`"}, stopAnomalies(st)...)
	if st.watches == 0 && len(r.empty.runs) > 0 {
		note = append(note, "no connection ever (start-to-ready, empty data dir): "+fmtDuration(median(r.empty.stopTimes())))
	}
	return strings.Join(note, "; ")
}

// stopTargetNote checks st against the target.
func stopTargetNote(st stopStats) string {
	target := fmt.Sprintf("target ≤ %s median: %s", fmtDuration(stopTarget), metNote(median(st.stopTimes()) <= stopTarget))
	if st.watches < stopTargetWatches {
		target += fmt.Sprintf(" (the target is for %s watches)", fmtCount(stopTargetWatches))
	}
	return target
}

// stopAnomalies flags kills, streams that outlived the server and
// unexpected events, then gives the watch connections.
func stopAnomalies(st stopStats) []string {
	var note []string
	var killed, unended, stray int
	var first string
	for _, run := range st.runs {
		if run.killed {
			killed++
		}
		unended += run.unended
		stray += run.stray
		if first == "" {
			first = run.strayFirst
		}
	}
	if killed > 0 {
		note = append(note, fmt.Sprintf("**killed in %d of %d round(s)**: still running %s after SIGTERM", killed, len(st.runs), stopKillAfter))
	}
	if unended > 0 {
		note = append(note, fmt.Sprintf("**%d stream(s) still open %s after the exit**", unended, stopDrainTimeout))
	}
	if stray > 0 {
		note = append(note, fmt.Sprintf("**%d watch(es) got other events**, the first %.120s", stray, first))
	}
	if st.watches > 0 {
		note = append(note, fmt.Sprintf("%d watch connection(s)", st.runs[0].conns))
	}
	return note
}

// fmtIntRange is "3" when every value is 3, else "min–max".
func fmtIntRange(ns []int) string {
	lo, hi := slices.Min(ns), slices.Max(ns)
	if lo == hi {
		return fmtCount(lo)
	}
	return fmtCount(lo) + "–" + fmtCount(hi)
}
