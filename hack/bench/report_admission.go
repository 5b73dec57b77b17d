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
	"math/rand/v2"
	"slices"
	"time"
)

// writeAdmission is the table of the admission section: per variant and
// server, the create latency and what admission adds to it; with
// kube-apiserver, the target (what admission adds is no more than it adds
// upstream).
func (r report) writeAdmission(b *markdown) {
	if len(r.admission.ours.none) == 0 {
		return
	}
	fmt.Fprintf(b, "Admission: %s ConfigMap creates per variant one after another on one connection, the variants in turn "+
		"(after %s untimed rounds), with one ValidatingAdmissionPolicy (one CEL expression, a binding) and one validating "+
		"webhook (served by the benchmark process over TLS) installed, each selecting by label the ConfigMaps of its variant.\n\n",
		fmtCount(r.cfg.admissionCreates), fmtCount(r.cfg.admissionCreates/10))
	b.WriteString("| create a ConfigMap | server | median | p99 | max | admission adds (median of per-round differences) |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	runs := []struct {
		name string
		run  admissionRun
	}{{"miniapiserver", r.admission.ours}}
	if r.admission.upstream != nil {
		runs = append(runs, struct {
			name string
			run  admissionRun
		}{"kube-apiserver", *r.admission.upstream})
	}
	for i, variant := range admissionVariants {
		for _, s := range runs {
			times := s.run.variants()[i]
			sorted := slices.Sorted(slices.Values(times))
			adds := "–"
			if i > 0 {
				adds = fmtSignedDuration(median(pairedDiffs(times, s.run.none)))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", variant, s.name, fmtDuration(median(times)),
				fmtDuration(percentile(sorted, 0.99)), fmtDuration(slices.Max(times)), adds)
		}
	}
	b.WriteString("\n")
	if r.admission.upstream == nil {
		return
	}
	up := *r.admission.upstream
	b.WriteString("| admission: ours vs upstream | median create, ours / upstream | admission adds, ours vs upstream (median of per-round differences) | ours − upstream, 95% interval | target: adds no more than upstream's |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for i, variant := range admissionVariants[1:] {
		ours, theirs := r.admission.ours.variants()[i+1], up.variants()[i+1]
		oa, ua := pairedDiffs(ours, r.admission.ours.none), pairedDiffs(theirs, up.none)
		lo, hi := bootstrapMedianDiff(oa, ua)
		verdict := metNote(lo <= 0)
		if lo <= 0 && hi >= 0 {
			verdict += " (no difference)"
		}
		fmt.Fprintf(b, "| %s | %s | %s vs %s | %s … %s | %s |\n", variant,
			fmtSmallRatio(median(ours).Seconds()/median(theirs).Seconds()),
			fmtSignedDuration(median(oa)), fmtSignedDuration(median(ua)), fmtSignedDuration(lo), fmtSignedDuration(hi), verdict)
	}
	b.WriteString("\n")
}

// pairedDiffs are the differences between a variant's creates and the
// creates with no admission of the same rounds.
func pairedDiffs(times, none []time.Duration) []time.Duration {
	d := make([]time.Duration, min(len(times), len(none)))
	for i := range d {
		d[i] = times[i] - none[i]
	}
	return d
}

// bootstrapMedianDiff is the 95% bootstrap interval of median(a) −
// median(b), from 1,000 resamples of each (seeded: a report is
// reproducible from its samples).
func bootstrapMedianDiff(a, b []time.Duration) (lo, hi time.Duration) {
	rng := rand.New(rand.NewPCG(1, 2))
	resample := func(xs []time.Duration) time.Duration {
		r := make([]time.Duration, len(xs))
		for i := range r {
			r[i] = xs[rng.IntN(len(xs))]
		}
		return median(r)
	}
	diffs := make([]time.Duration, 1000)
	for i := range diffs {
		diffs[i] = resample(a) - resample(b)
	}
	slices.Sort(diffs)
	return diffs[len(diffs)*25/1000], diffs[len(diffs)*975/1000-1]
}

// fmtSignedDuration is fmtDuration with a sign: an overhead can be
// negative (noise).
func fmtSignedDuration(d time.Duration) string {
	if d < 0 {
		return "−" + fmtDuration(-d)
	}
	return "+" + fmtDuration(d)
}
