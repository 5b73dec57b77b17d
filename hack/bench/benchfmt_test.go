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
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// TestBenchfmtPairsEachUpstreamSample: the samples written for benchstat
// parse as Go benchmark results, one per sample, and each upstream
// benchmark has a miniapiserver twin of the same name, so that benchstat
// -col /server compares them.
func TestBenchfmtPairsEachUpstreamSample(t *testing.T) {
	for name, r := range map[string]report{"upstream": upstreamReport(), "more": upstreamMoreReport(), "sections": upstreamSectionsReport()} {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			if err := r.writeBenchfmt(&out); err != nil {
				t.Fatal(err)
			}
			servers := map[string]map[string]int{} // name without server= → server → results
			reader := benchfmt.NewReader(strings.NewReader(out.String()), name)
			for reader.Scan() {
				switch rec := reader.Result().(type) {
				case *benchfmt.SyntaxError:
					t.Fatalf("%v", rec)
				case *benchfmt.Result:
					full := string(rec.Name.Full())
					base, server, ok := strings.Cut(full, "/server=")
					if !ok {
						t.Fatalf("%s: no server= key", full)
					}
					if servers[base] == nil {
						servers[base] = map[string]int{}
					}
					servers[base][server]++
				}
			}
			if len(servers) == 0 {
				t.Fatal("no results")
			}
			for base, n := range servers {
				if n["upstream"] > 0 && n["mini"] == 0 {
					t.Errorf("%s: upstream samples and no miniapiserver twin", base)
				}
			}
			if p := r.upstream.lists; len(p) > 0 {
				base := listName("List", p[0].ours.variant)
				if got, want := servers[base]["upstream"], len(p[0].upstream.times); got != want {
					t.Errorf("%s: %d upstream samples, want %d", base, got, want)
				}
			}
		})
	}
}
