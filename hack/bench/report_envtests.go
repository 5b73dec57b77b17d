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
)

// Targets of the envtests section.
const (
	envtestsSpeedup     = 5.0                    // envtest's suite time over ours, at least
	firstCreateAtMostMs = 100 * time.Millisecond // each test's first custom resource create, at most
)

// writeEnvtests is the table of the envtests section.
func (r report) writeEnvtests(b *markdown) {
	if len(r.envtests.ours.starts) == 0 {
		return
	}
	fmt.Fprintf(b, "Envtests: an operator's suite of %d controller tests run at once, each with an environment of its own "+
		"(a CRD from a directory; a controller-runtime manager whose reconciler gives each custom resource a Deployment it owns; "+
		"one custom resource created, then its Deployment awaited), on pkg/envtest and on controller-runtime's envtest "+
		"(its default kube-apiserver and etcd flags) running the kube-apiserver and etcd above.\n\n", r.cfg.envtests)
	b.WriteString("| environment | suite wall time | start, median (max) | first custom resource create, median (max) | stop, median (max) |\n")
	b.WriteString("|---|---|---|---|---|\n")
	row := func(name string, run envtestsRun) {
		mm := func(xs []time.Duration) string {
			return fmt.Sprintf("%s (%s)", fmtDuration(median(xs)), fmtDuration(slices.Max(xs)))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name, fmtDuration(run.wall), mm(run.starts), mm(run.firstCreates), mm(run.stops))
	}
	row("pkg/envtest", r.envtests.ours)
	if up := r.envtests.upstream; up != nil {
		row("controller-runtime envtest (kube-apiserver)", *up)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "Targets: every first create ≤ %s: %s", fmtDuration(firstCreateAtMostMs),
		metNote(slices.Max(r.envtests.ours.firstCreates) <= firstCreateAtMostMs))
	if up := r.envtests.upstream; up != nil {
		speedup := up.wall.Seconds() / r.envtests.ours.wall.Seconds()
		fmt.Fprintf(b, "; the suite ≥ %.0f× faster than on envtest: %.1f×, %s", envtestsSpeedup, speedup, metNote(speedup >= envtestsSpeedup))
	}
	b.WriteString(".\n\n")
}
