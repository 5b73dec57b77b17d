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
)

// writeRestarts is the table of the restarts section and its comparison.
func (r report) writeRestarts(b *markdown) {
	res := r.restarts
	if len(res.resume.runs) == 0 {
		return
	}
	b.paragraph("restarts", restartsProse{
		Objects: r.cfg.restartObjects, Namespace: namespace, Leases: restartLeases, Rounds: r.cfg.restartRounds,
		Timeout: resyncTimeout, Upstream: res.upstream != nil, UpstreamShutdownTimeout: upstreamShutdownTimeout,
	})
	b.WriteString("| restart under informers | variant |")
	for _, res := range watchedResources {
		fmt.Fprintf(b, " %s relists |", res.name)
	}
	b.WriteString(" resync median | min | max | note |\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(watchedResources)+4) + "\n")
	bench := fmt.Sprintf("%s each of ConfigMaps, Secrets, Pods", fmtCount(r.cfg.restartObjects))
	all := []restartStats{res.resume, res.relist}
	if res.upstream != nil {
		all = append(all, *res.upstream)
	}
	for _, st := range all {
		fmt.Fprintf(b, "| %s | %s |", bench, st.mode.name)
		for i := range watchedResources {
			cell := fmtIntRange(st.relists(i))
			if st.mode.name == resumeMode.name && slices.Max(st.relists(i)) > 0 {
				cell = "**" + cell + "**"
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		times := st.resyncTimes()
		fmt.Fprintf(b, " %s | %s | %s | %s |\n", fmtDuration(median(times)), fmtDuration(slices.Min(times)),
			fmtDuration(slices.Max(times)), restartNote(st))
	}
	b.WriteString("\n")

	on, off := totalRelists(res.resume), totalRelists(res.relist)
	note := "target: 0 relists with the gate on: " + metNote(on == 0)
	if off == 0 {
		note += " (**the gate off did not relist either**: the comparison shows nothing)"
	}
	b.WriteString("| restart comparison | resync time (of medians) | relists, all rounds | note |\n")
	b.WriteString("|---|---|---|---|\n")
	fmt.Fprintf(b, "| EfficientWatchResumption off / on | %s | %d / %d | %s; resync time is no target (client-go's retry backoff) |\n",
		fmtRatio(median(res.relist.resyncTimes()).Seconds()/median(res.resume.resyncTimes()).Seconds()), off, on, note)
	if up := res.upstream; up != nil {
		for _, st := range []restartStats{res.resume, res.relist} {
			fmt.Fprintf(b, "| miniapiserver %s / kube-apiserver | %s | %d / %d | relists per restart: %s / %s; resync time is no target |\n",
				st.mode.name, fmtRatio(median(st.resyncTimes()).Seconds()/median(up.resyncTimes()).Seconds()),
				totalRelists(st), totalRelists(*up), fmtPerRestart(st), fmtPerRestart(*up))
		}
	}
	b.WriteString("\n")
}

// fmtPerRestart is the relists of all informers per restart: "3", or "0.67"
// when the rounds differ.
func fmtPerRestart(st restartStats) string {
	per := float64(totalRelists(st)) / float64(len(st.runs))
	if per == float64(int(per)) {
		return fmt.Sprint(int(per))
	}
	return fmt.Sprintf("%.2f", per)
}

func totalRelists(st restartStats) int {
	total := 0
	for _, run := range st.runs {
		for _, n := range run.relists {
			total += n
		}
	}
	return total
}

// restartNote gives the server flags, how long the stop with the
// informers' watches open took, and the restart.
func restartNote(st restartStats) string {
	flags := "server defaults"
	if len(st.mode.args) > 0 {
		flags = "`" + strings.Join(st.mode.args, " ") + "`"
	}
	if st.mode.name == upstreamRestartMode.name {
		return fmt.Sprintf("its defaults; kube-apiserver's SIGTERM→exit median %s (max %s); its restart exec→/readyz 200 median %s (max %s)",
			fmtDuration(median(st.stopTimes())), fmtDuration(slices.Max(st.stopTimes())),
			fmtDuration(median(st.restartTimes())), fmtDuration(slices.Max(st.restartTimes())))
	}
	return fmt.Sprintf("%s; SIGTERM→exit median %s (max %s); restart exec→ready median %s (max %s)", flags,
		fmtDuration(median(st.stopTimes())), fmtDuration(slices.Max(st.stopTimes())),
		fmtDuration(median(st.restartTimes())), fmtDuration(slices.Max(st.restartTimes())))
}
