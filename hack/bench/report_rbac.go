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
)

// writeRBAC is the table of the rbac section: per operation and server,
// the latency, and what being the bound user instead of the admin adds;
// with kube-apiserver, the target (ours no slower than upstream's).
func (r report) writeRBAC(b *markdown) {
	if len(r.rbac.ours) == 0 {
		return
	}
	fmt.Fprintf(b, "RBAC: %s rounds (after %s untimed) of a LIST of %d ConfigMaps and a ConfigMap create, each as the admin "+
		"(system:masters, which RBAC never sees) and as a user (a token of `--token-auth-file`) whose RoleBinding (to a Role that may list and create ConfigMaps) is one of %s "+
		"in the namespace, one request at a time.\n\n",
		fmtCount(r.cfg.rbacRounds), fmtCount(r.cfg.rbacRounds/10), rbacListed, fmtCount(r.cfg.rbacBindings))
	b.WriteString("| operation | server | median | p99 | being the bound user adds (median of per-round differences) |\n")
	b.WriteString("|---|---|---|---|---|\n")
	runs := []struct {
		name string
		run  rbacRun
	}{{"miniapiserver", r.rbac.ours}}
	if r.rbac.upstream != nil {
		runs = append(runs, struct {
			name string
			run  rbacRun
		}{"kube-apiserver", *r.rbac.upstream})
	}
	for i, op := range rbacOps {
		for _, s := range runs {
			times := s.run[i]
			adds := "–"
			if i%2 == 1 {
				adds = fmtSignedDuration(median(pairedDiffs(times, s.run[i-1])))
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", op, s.name, fmtDuration(median(times)),
				fmtDuration(percentile(slices.Sorted(slices.Values(times)), 0.99)), adds)
		}
	}
	b.WriteString("\n")
	if r.rbac.upstream == nil {
		return
	}
	up := *r.rbac.upstream
	b.WriteString("| as the bound user | median, ours / upstream | ours − upstream, 95% interval of the medians | target: ours no slower |\n")
	b.WriteString("|---|---|---|---|\n")
	for i := 1; i < len(rbacOps); i += 2 {
		ours, theirs := r.rbac.ours[i], up[i]
		lo, hi := bootstrapMedianDiff(ours, theirs)
		verdict := metNote(lo <= 0)
		if lo <= 0 && hi >= 0 {
			verdict += " (no difference)"
		}
		fmt.Fprintf(b, "| %s | %s | %s … %s | %s |\n", rbacOps[i], fmtSmallRatio(median(ours).Seconds()/median(theirs).Seconds()),
			fmtSignedDuration(lo), fmtSignedDuration(hi), verdict)
	}
	b.WriteString("\n")
}
