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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSamples writes n rounds of StartToReady/data=empty (ours 0.25 s,
// upstream's 2.5 s: 10× faster, give or take a few ms) and of a LIST where
// both take 50 ms.
func writeSamples(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("goos: linux\ncpu: test\n")
	for i := range n {
		jitter := float64(i) * 1e6
		fmt.Fprintf(&b, "BenchmarkStartToReady/data=empty/server=mini-2 1 %.0f ns/op\n", 250e6+jitter)
		fmt.Fprintf(&b, "BenchmarkStartToReady/data=empty/server=upstream-2 1 %.0f ns/op\n", 2600e6+jitter)
		fmt.Fprintf(&b, "BenchmarkList/cache=on/format=json/limit=0/rv=none/server=mini-2 20 %.0f ns/op\n", 50e6+jitter)
		fmt.Fprintf(&b, "BenchmarkList/cache=on/format=json/limit=0/rv=none/server=upstream-2 20 %.0f ns/op\n", 50e6+jitter)
	}
	file := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestTargetsJudgeRatiosAndSignificance(t *testing.T) {
	s, err := readSamples([]string{writeSamples(t, 6)})
	if err != nil {
		t.Fatal(err)
	}
	table := targetsTable(s)
	for _, want := range []string{
		"| start to ready, empty data dir | `StartToReady/data=empty` | sec/op | 10.", // the ratio
		"| ours ≥ 10× faster | met |",
		" ms | ≤ 1.00 s | met |",
		"| LIST 10,000 ConfigMaps, JSON | `List/cache=on/format=json/limit=0/rv=none` | sec/op | ~ (1.00×", // no difference
		"| ours ≥ 1.5× faster | no difference: **missed** |",
		"| stop with 1,000 open watches | `Stop/watches=1000/cache=on` | sec/op |  | ≤ 100 ms | not measured |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the targets table has no %q:\n%s", want, table)
		}
	}
}

func TestTooFewRoundsShowNoDifference(t *testing.T) {
	s, err := readSamples([]string{writeSamples(t, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if figure, verdict := targets[0].check(s); !strings.HasPrefix(figure, "~") || !strings.HasPrefix(verdict, "no difference") {
		t.Errorf("2 rounds 10× apart: got %q, %q; want no difference (a U test needs 4 rounds a side at α 0.05)", figure, verdict)
	}
}

func TestReadmeHeadlineGoesBetweenTheMarkers(t *testing.T) {
	readme := filepath.Join(t.TempDir(), "README.md")
	doc := "# x\n\n<!-- bench:begin -->\nold\n<!-- bench:end -->\n\nafter\n"
	if err := os.WriteFile(readme, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{writeSamples(t, 6)}, readme, "", "", nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "<!-- bench:begin -->\n| benchmark |") || strings.Contains(string(got), "old") ||
		!strings.HasSuffix(string(got), "<!-- bench:end -->\n\nafter\n") {
		t.Errorf("README after:\n%s", got)
	}
	if err := os.WriteFile(readme, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{writeSamples(t, 6)}, readme, "", "", nil); err == nil {
		t.Error("a README without markers: no error")
	}
}
