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

	clientfeatures "k8s.io/client-go/features"
)

// writeInformers is the informer memory table and its ratio, then with
// -upstream the same side by side with kube-apiserver, then the heap
// picture.
func (r report) writeInformers(b *markdown) {
	res := r.informers
	if len(res.watchList.rounds) == 0 {
		return
	}
	p := informersProse{
		Informers: r.cfg.informers, Secrets: r.cfg.secrets, SecretSize: float64(r.cfg.secretSize), Namespace: namespace,
		Populate: res.populate, Gzip: r.cfg.gzip, Rounds: r.cfg.informerRounds, HeapMetric: heapInuseBytes,
		HeapSample: r.cfg.heapSample, SamplerRuns: samplerRuns, Gate: string(clientfeatures.WatchListClient), RequestMetric: requestTotal,
		Picture: res.heapSVG != "",
	}
	if res.upstream != nil {
		p.Upstream, p.UpstreamPopulate = true, res.upstream.populate
	}
	b.paragraph("informers", p)
	b.WriteString("| informers | variant | sync median | min | max | peak heap growth (median) | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, st := range []informerStats{res.watchList, res.list} {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.informersBench(), st.mode.name,
			fmtDuration(median(st.syncTimes())), fmtDuration(slices.Min(st.syncTimes())), fmtDuration(slices.Max(st.syncTimes())),
			fmtBytes(medianFloat(st.growths())), r.informerNote(st))
	}
	b.WriteString("\n")

	growthRatio := medianFloat(res.watchList.growths()) / medianFloat(res.list.growths())
	limit := float64(r.cfg.informers * perInformerBytes)
	met := growthRatio <= informerShare && medianFloat(res.watchList.growths()) <= limit
	b.WriteString("| informer ratio (of medians) | sync time | peak heap growth | note |\n")
	b.WriteString("|---|---|---|---|\n")
	fmt.Fprintf(b, "| watch-list / LIST | %s | %s | target ≤ %.2f× (1/3) and watch-list growth ≤ %d × %s = %s: %s%s |\n\n",
		fmtRatio(median(res.watchList.syncTimes()).Seconds()/median(res.list.syncTimes()).Seconds()), fmtRatio(growthRatio),
		informerShare, r.cfg.informers, fmtBytes(perInformerBytes), fmtBytes(limit), metNote(met),
		r.informerModesNote(res.watchList, res.list))

	r.writeUpstreamInformers(b)
	if res.heapSVG != "" {
		b.WriteString(heapPictureNote(res.heapSVG, res.upstream != nil))
		b.WriteString("\n\n")
	}
}

func (r report) informersBench() string {
	return fmt.Sprintf("%d informers, %s × %s Secrets", r.cfg.informers, fmtCount(r.cfg.secrets), fmtBytes(float64(r.cfg.secretSize)))
}

// writeUpstreamInformers is a row per server and mode with the absolute
// figures, then the ratios of miniapiserver's medians over upstream's.
func (r report) writeUpstreamInformers(b *markdown) {
	res := r.informers
	u := res.upstream
	if u == nil || len(u.watchList.rounds) == 0 || len(u.list.rounds) == 0 {
		return
	}
	b.WriteString("| vs kube-apiserver: informers | server | variant | sync median | min | max | peak heap growth (median) " +
		"| heap after GC (median) | Secret LISTs; watches per round (median) | heap samples per round (median); the sampler's share |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	type row struct {
		server string
		st     informerStats
	}
	for _, row := range []row{
		{"miniapiserver", res.watchList}, {"kube-apiserver + etcd", u.watchList},
		{"miniapiserver", res.list}, {"kube-apiserver + etcd", u.list},
	} {
		st := row.st
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.informersBench(), row.server, st.mode.name,
			fmtDuration(median(st.syncTimes())), fmtDuration(slices.Min(st.syncTimes())), fmtDuration(slices.Max(st.syncTimes())),
			fmtBytes(medianFloat(st.growths())), fmtBytes(medianFloat(st.baselines())), r.requestsNote(st), samplesNote(st, "")+"; "+samplerNote(st))
	}
	b.WriteString("\n| informers: ours / upstream (of medians) | sync time | peak heap growth | note |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, pair := range [][2]informerStats{{res.watchList, u.watchList}, {res.list, u.list}} {
		ours, theirs := pair[0], pair[1]
		note := "lower is better for miniapiserver"
		if w := r.modeWarning(ours) + r.modeWarning(theirs); w != "" {
			note = "**a server did not run as named**: miniapiserver " + r.requestsNote(ours) + "; kube-apiserver " + r.requestsNote(theirs)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", ours.mode.name,
			fmtRatio(median(ours.syncTimes()).Seconds()/median(theirs.syncTimes()).Seconds()),
			fmtRatio(medianFloat(ours.growths())/medianFloat(theirs.growths())), note)
	}
	b.WriteString("\n")
}

// informerModesNote warns when a variant did not run as named, which makes
// the ratio meaningless.
func (r report) informerModesNote(watchList, list informerStats) string {
	wl, l := medianFloat(watchList.lists()), medianFloat(list.lists())
	if wl == 0 && l >= float64(r.cfg.informers) {
		return ""
	}
	return fmt.Sprintf(" (**both variants did the same**: %.0f and %.0f Secret LISTs per round)", wl, l)
}

// modeWarning is "" when st's rounds did what its mode says: no LIST with
// watch-list, a LIST per informer with LIST.
func (r report) modeWarning(st informerStats) string {
	lists := medianFloat(st.lists())
	switch {
	case st.mode.name == watchListMode.name && lists > 0:
		return "**fell back to LIST**: "
	case st.mode.name == listMode.name && lists < float64(r.cfg.informers):
		return "**not LIST+WATCH**: "
	}
	return ""
}

// requestsNote is the Secret LISTs and watches per round, flagged when they
// do not match the mode.
func (r report) requestsNote(st informerStats) string {
	return fmt.Sprintf("%s%.0f LISTs; %.0f watches", r.modeWarning(st), medianFloat(st.lists()), medianFloat(st.watches()))
}

// samplesNote is the median heap samples per round, what followed by the
// period they achieved.
func samplesNote(st informerStats, what string) string {
	samples := perRound(st, func(r informerRound) float64 { return float64(r.samples) })
	every := median(st.syncTimes()) / time.Duration(max(medianFloat(samples), 1))
	return fmt.Sprintf("%.0f%s (one per %s)", medianFloat(samples), what, fmtDuration(every))
}

// informerNote gives the client's mode, the heap before the rounds, and the
// Secret LISTs and watches per round, flagging a watch-list run that fell
// back to LIST.
func (r report) informerNote(st informerStats) string {
	return fmt.Sprintf("`%s`, server defaults; heap after GC %s; %s%.0f Secret LISTs, %.0f watches per round; %s; %s",
		st.mode.gate(), fmtBytes(medianFloat(st.baselines())), r.modeWarning(st), medianFloat(st.lists()),
		medianFloat(st.watches()), samplesNote(st, " heap samples per round"), samplerNote(st))
}

// samplerNote is the raw peak heap growth and what the sampler's scrapes
// made of it (medians over the rounds).
func samplerNote(st informerStats) string {
	return fmt.Sprintf("raw peak growth %s, less %s of the sampler's scrapes (%s a sample)",
		fmtBytes(medianFloat(st.rawGrowths())), fmtBytes(medianFloat(st.samplers())), fmtBytes(st.perSample))
}
