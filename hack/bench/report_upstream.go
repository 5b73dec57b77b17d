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
	"cmp"
	"fmt"
	"slices"
	"time"
)

// upstreamProse is the "upstream" paragraph.
type upstreamProse struct {
	APIServer, Etcd string   // the binaries' versions
	Dir             string   // -upstream as given
	Args            []string // -upstream-args
	Starts          int      // rounds of start-to-ready; 0: the starts section did not run
	Poll            time.Duration
	Lists           int // timed rounds per LIST variant; 0: the lists section did not run
	Objects         int
	Namespace       string
	Workers         int
	Populate        time.Duration // upstream's
	OursPopulate    time.Duration // miniapiserver's
	ExactRVWrites   int
	AllocMetric     string
	RouteMetric     string // counts the LISTs miniapiserver's watch cache served
	// UpstreamRouteMetric counts upstream's LISTs by storage.
	UpstreamRouteMetric string
	Gzip                bool
	// Both are the other sections that ran side by side too: rv0, crds,
	// pagination, watch, throughput, informers, stops, restarts.
	Both     []string
	OursOnly []string // what ran on miniapiserver only
}

// writeUpstream is the side-by-side part: its paragraph, then a table for
// start-to-ready and one for the LISTs.
func (r report) writeUpstream(b *markdown) {
	u := r.upstream
	if u == nil {
		return
	}
	both := r.upstreamBoth()
	if len(u.starts.ours.runs) == 0 && len(u.lists) == 0 && len(both) == 0 {
		return
	}
	p := upstreamProse{
		APIServer: u.bins.apiserverVersion, Etcd: u.bins.etcdVersion, Dir: r.cfg.upstream, Args: u.bins.args,
		Poll: readyzPoll, Objects: r.cfg.objects, Namespace: namespace, Workers: r.cfg.workers,
		Populate: u.populate.duration, OursPopulate: r.populate.duration, ExactRVWrites: exactRVWrites,
		AllocMetric: allocBytesTotal, RouteMetric: cacheListRequests, UpstreamRouteMetric: upstreamListsTotal, Gzip: r.cfg.gzip,
		Both: both,
	}
	if len(u.starts.ours.runs) > 0 {
		p.Starts = r.cfg.starts
	}
	if len(u.lists) > 0 {
		p.Lists = r.cfg.lists
	}
	if p.Starts > 0 {
		p.OursOnly = append(p.OursOnly, "start-to-ready on the populated data dir")
	}
	for _, name := range r.ranSections() {
		switch {
		case name == "starts" || name == "lists":
		case !slices.Contains(both, name):
			p.OursOnly = append(p.OursOnly, "the "+name+" section")
		case partlyOursOnly[name] != "":
			p.OursOnly = append(p.OursOnly, partlyOursOnly[name])
		}
	}
	b.paragraph("upstream", p)
	r.writeUpstreamStarts(b)
	r.writeUpstreamLists(b)
}

// partlyOursOnly is what of a section that runs side by side runs on
// miniapiserver only.
var partlyOursOnly = map[string]string{
	"rv0":        "the rv0 section's `--watch-cache=false` LISTs",
	"crds":       "the crds section's `--watch-cache=false` LISTs and first LISTs after the start",
	"throughput": "the throughput section's `--watch-cache=false` run",
	"pagination": "the pagination section's `--watch-cache=false` server, exact-RV LISTs and first-pages memory",
	"watch":      "the watch section's `--watch-cache=false` runs",
	"stops":      "the stops section's `--watch-cache=false` stops and its control",
}

// upstreamBoth are the sections other than starts and lists that ran on
// upstream too, in the order they ran.
func (r report) upstreamBoth() []string {
	ran := map[string]bool{
		"rv0":        len(r.upstream.rv0) > 0,
		"crds":       r.crds.upstream != nil,
		"throughput": r.throughput.upstream != nil,
		"restarts":   r.restarts.upstream != nil,
		"pagination": r.pagination.upstream != nil,
		"watch":      len(r.upstream.watch) > 0,
		"informers":  r.informers.upstream != nil,
		"stops":      len(r.upstream.stops.runs) > 0,
		"admission":  r.admission.upstream != nil,
		"envtests":   r.envtests.upstream != nil,
		"rbac":       r.rbac.upstream != nil,
	}
	var both []string
	for _, name := range r.ranSections() {
		if ran[name] {
			both = append(both, name)
		}
	}
	return both
}

func (r report) writeUpstreamStarts(b *markdown) {
	st := r.upstream.starts
	if len(st.ours.runs) == 0 {
		return
	}
	b.WriteString("| vs kube-apiserver | miniapiserver median | kube-apiserver + etcd median | upstream / ours | target |\n")
	b.WriteString("|---|---|---|---|---|\n")
	ready := [2]time.Duration{median(st.ours.readyTimes()), median(st.upstream.readyTimes())}
	writePairRow(b, "start-to-ready, empty data dir", ready, upstreamTargetNote(ratioOf(ready), upstreamStartTarget))
	stop := [2]time.Duration{median(st.ours.stopTimes()), median(st.upstream.stopTimes())}
	writePairRow(b, "SIGTERM→exit after it", stop, "none")
	b.WriteString("\n")
}

func writePairRow(b *markdown, label string, medians [2]time.Duration, note string) {
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", label, fmtDuration(medians[0]), fmtDuration(medians[1]),
		fmtRatio(ratioOf(medians)), note)
}

// ratioOf is upstream's median over ours.
func ratioOf(medians [2]time.Duration) float64 {
	return medians[1].Seconds() / medians[0].Seconds()
}

func upstreamTargetNote(ratio, target float64) string {
	return fmt.Sprintf("≥ %g×: %s", target, metNote(ratio >= target))
}

func (r report) writeUpstreamLists(b *markdown) {
	lists := r.upstream.lists
	if len(lists) == 0 {
		return
	}
	fmt.Fprintf(b, "| vs kube-apiserver: LIST %s ConfigMaps | miniapiserver median | kube-apiserver median | upstream / ours "+
		"| miniapiserver alloc/op | kube-apiserver + etcd alloc/op | from the watch cache: ours; upstream's | target |\n", fmtCount(r.cfg.objects))
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	met := 0
	for _, p := range lists {
		ratio := listTimeRatio(p.upstream, p.ours)
		if ratio >= p.target {
			met++
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s; %s | %s |\n", pairLabel(p.ours.variant),
			fmtDuration(median(p.ours.times)), fmtDuration(median(p.upstream.times)), fmtRatio(ratio),
			fmtBytes(p.ours.allocPerOp), fmtBytes(p.upstream.allocPerOp),
			fromCacheNote(p.fromCache[0], p.requests[0]), fromCacheNote(p.fromCache[1], p.requests[1]),
			upstreamTargetNote(ratio, p.target))
	}
	worst := slices.MinFunc(lists, func(a, b listPair) int {
		return cmp.Compare(listTimeRatio(a.upstream, a.ours)/a.target, listTimeRatio(b.upstream, b.ours)/b.target)
	})
	fmt.Fprintf(b, "\n%d of %d LIST targets met; the furthest from its target: %s at %s (target %g×).\n\n", met, len(lists),
		pairLabel(worst.ours.variant), fmtRatio(listTimeRatio(worst.upstream, worst.ours)), worst.target)
}

// fromCacheNote is "20 of 20" requests, in bold when some went to etcd.
func fromCacheNote(fromCache, requests float64) string {
	note := fmt.Sprintf("%.0f of %.0f", fromCache, requests)
	if fromCache < requests {
		return "**" + note + "**"
	}
	return note
}
