package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// writeInformers is the informer memory table and its ratio.
func (r report) writeInformers(b *markdown) {
	res := r.informers
	if len(res.watchList.rounds) == 0 {
		return
	}
	b.paragraph("informers", informersProse{
		Informers: r.cfg.informers, Secrets: r.cfg.secrets, SecretSize: float64(r.cfg.secretSize), Namespace: namespace,
		Populate: res.populate, Gzip: r.cfg.gzip, Rounds: r.cfg.informerRounds, HeapMetric: heapInuseBytes,
		HeapSample: r.cfg.heapSample,
	})
	b.WriteString("| informers | variant | sync median | min | max | peak heap growth (median) | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	bench := fmt.Sprintf("%d informers, %s × %s Secrets", r.cfg.informers, fmtCount(r.cfg.secrets), fmtBytes(float64(r.cfg.secretSize)))
	for _, st := range []informerStats{res.watchList, res.list} {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", bench, st.mode.name,
			fmtDuration(median(st.syncTimes())), fmtDuration(slices.Min(st.syncTimes())), fmtDuration(slices.Max(st.syncTimes())),
			fmtBytes(medianFloat(st.growths())), r.informerNote(st))
	}
	b.WriteString("\n")

	growthRatio := medianFloat(res.watchList.growths()) / medianFloat(res.list.growths())
	limit := float64(r.cfg.informers * perInformerBytes)
	met := growthRatio <= informerShare && medianFloat(res.watchList.growths()) <= limit
	b.WriteString("| informer ratio (of medians) | sync time | peak heap growth | note |\n")
	b.WriteString("|---|---|---|---|\n")
	fmt.Fprintf(b, "| watch-list / LIST | %s | %s | target ≤ %.2f× and watch-list growth ≤ %d × %s = %s: %s%s |\n\n",
		fmtRatio(median(res.watchList.syncTimes()).Seconds()/median(res.list.syncTimes()).Seconds()), fmtRatio(growthRatio),
		informerShare, r.cfg.informers, fmtBytes(perInformerBytes), fmtBytes(limit), metNote(met), r.informerModesNote())
}

// informerModesNote warns when a variant did not run as named, which makes
// the ratio meaningless.
func (r report) informerModesNote() string {
	wl, l := medianFloat(r.informers.watchList.lists()), medianFloat(r.informers.list.lists())
	if wl == 0 && l >= float64(r.cfg.informers) {
		return ""
	}
	return fmt.Sprintf(" (**both variants did the same**: %.0f and %.0f Secret LISTs per round)", wl, l)
}

// informerNote gives the server flags, the heap before the rounds, and the
// Secret LISTs per round, flagging a watch-list run that fell back to LIST.
func (r report) informerNote(st informerStats) string {
	flags := "server defaults"
	if len(st.mode.args) > 0 {
		flags = "`" + strings.Join(st.mode.args, " ") + "`"
	}
	var baselines, samples []float64
	for _, round := range st.rounds {
		baselines, samples = append(baselines, round.baseline), append(samples, float64(round.samples))
	}
	lists := medianFloat(st.lists())
	listNote := fmt.Sprintf("%.0f Secret LISTs per round", lists)
	switch {
	case st.mode.name == watchListMode.name && lists > 0:
		listNote = "**fell back to LIST**: " + listNote
	case st.mode.name == listMode.name && lists < float64(r.cfg.informers):
		listNote = "**not LIST+WATCH**: " + listNote
	}
	every := median(st.syncTimes()) / time.Duration(max(medianFloat(samples), 1))
	return fmt.Sprintf("%s; heap after GC %s; %s; %.0f heap samples per round (one per %s)", flags,
		fmtBytes(medianFloat(baselines)), listNote, medianFloat(samples), fmtDuration(every))
}
