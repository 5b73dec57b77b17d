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
	b.paragraph("stops", stopsProse{
		Watches: r.cfg.stopWatches, Namespace: namespace, PerConn: r.cfg.watchersPerConn, OpenMetric: longRunning,
		Rounds: r.cfg.stopRounds, KillAfter: stopKillAfter,
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
	target := fmt.Sprintf("target ≤ %s median: %s", fmtDuration(stopTarget), metNote(median(st.stopTimes()) <= stopTarget))
	switch {
	case st.watches == 0:
		target = "control: one idle client connection, no watch"
	case st.watches < stopTargetWatches:
		target += fmt.Sprintf(" (the target is for %s watches)", fmtCount(stopTargetWatches))
	}
	note := []string{target, "`" + strings.Join(st.path.args, " ") + "`"}
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
	if st.watches == 0 && len(r.empty.runs) > 0 {
		note = append(note, "no connection ever (start-to-ready, empty data dir): "+fmtDuration(median(r.empty.stopTimes())))
	}
	return strings.Join(note, "; ")
}

// fmtIntRange is "3" when every value is 3, else "min–max".
func fmtIntRange(ns []int) string {
	lo, hi := slices.Min(ns), slices.Max(ns)
	if lo == hi {
		return fmtCount(lo)
	}
	return fmtCount(lo) + "–" + fmtCount(hi)
}
