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

// Command benchreport turns the samples of make bench-upstream (Go
// benchmark format, every round of every benchmark on miniapiserver and
// kube-apiserver) into the headline table of the README, the targets
// table and the fan-out latency plot of docs/benchmarks.md. Medians,
// intervals and tests come from golang.org/x/perf/benchmath, as benchstat's.
//
//	go run ./cmd/benchreport -readme ../../README.md -doc ../../docs/benchmarks.md \
//		-benchstat ../../docs/benchstat.txt ../../docs/bench.txt
//
// Without -readme and -doc it prints the targets table.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

func main() {
	readme := flag.String("readme", "", "Markdown file whose lines between "+beginMarker+" and "+endMarker+" get the headline table")
	doc := flag.String("doc", "", "Markdown file to write the full report to")
	stat := flag.String("benchstat", "", "benchstat's comparison of the same samples, which -doc includes")
	flag.Parse()
	if err := run(flag.Args(), *readme, *doc, *stat, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

func run(files []string, readme, doc, stat string, out io.Writer) error {
	if len(files) == 0 {
		return errors.New("no sample files")
	}
	s, err := readSamples(files)
	if err != nil {
		return err
	}
	if readme == "" && doc == "" {
		_, err := io.WriteString(out, targetsTable(s))
		return err
	}
	if readme != "" {
		if err := replaceBetweenMarkers(readme, headlineTable(s)); err != nil {
			return err
		}
	}
	if doc != "" {
		return writeDoc(doc, stat, s)
	}
	return nil
}

// samples are the values of each benchmark (its name without the server
// key and GOMAXPROCS) and unit, per server; config is the files'
// key: value lines (goos, cpu, ...).
type samples struct {
	values map[key]map[string][]float64
	config []string
}

type key struct{ name, unit string }

// secUnit matches the tidied units of times: sec/op, p99-sec, stop-sec/op.
var secUnit = regexp.MustCompile(`(^|-)sec(/|$)`)

func readSamples(files []string) (*samples, error) {
	s := &samples{values: map[key]map[string][]float64{}}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		r := benchfmt.NewReader(f, file)
		for r.Scan() {
			res, ok := r.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			base, parts := res.Name.Parts()
			name := string(base)
			server := "mini"
			for _, p := range parts {
				switch {
				case bytes.HasPrefix(p, []byte("/server=")):
					server = string(p[len("/server="):])
				case bytes.HasPrefix(p, []byte("/")):
					name += string(p)
				}
			}
			for _, v := range res.Values {
				k := key{name, v.Unit}
				if s.values[k] == nil {
					s.values[k] = map[string][]float64{}
				}
				s.values[k][server] = append(s.values[k][server], v.Value)
			}
			if len(s.config) == 0 {
				for _, c := range res.Config {
					if c.File && (c.Key == "cpu" || c.Key == "goos" || c.Key == "goarch") {
						s.config = append(s.config, c.Key+": "+string(c.Value))
					}
				}
			}
		}
		err = r.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// stat is the median of one benchmark's unit on one server, with its 95%
// confidence interval.
type stat struct {
	benchmath.Summary
	n      int
	sample *benchmath.Sample
}

func (s *samples) stat(name, unit, server string) (stat, bool) {
	values := s.values[key{name, unit}][server]
	if len(values) == 0 {
		return stat{}, false
	}
	sample := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	return stat{benchmath.AssumeNothing.Summary(sample, 0.95), len(values), sample}, true
}

// ratio compares a benchmark's unit on both servers: upstream's median
// over ours, so that above 1 is better for us where lower is better.
type ratio struct {
	mini, upstream stat
	times          float64 // upstream / mini
	lo, hi         float64 // from the medians' intervals
	p              float64 // Mann-Whitney U test
}

func (s *samples) ratio(name, unit, ours string) (ratio, bool) {
	m, ok1 := s.stat(name, unit, ours)
	u, ok2 := s.stat(name, unit, "upstream")
	if !ok1 || !ok2 || m.Center == 0 {
		return ratio{}, false
	}
	c := benchmath.AssumeNothing.Compare(m.sample, u.sample)
	return ratio{mini: m, upstream: u, times: u.Center / m.Center, lo: u.Lo / m.Hi, hi: u.Hi / m.Lo, p: c.P}, true
}

// significant is whether the test shows a difference at alpha 0.05.
func (r ratio) significant() bool { return r.p < 0.05 }

func (r ratio) String() string {
	if !r.significant() {
		return fmt.Sprintf("~ (%s, p=%.2f, n=%d+%d)", fmtTimes(r.times), r.p, r.mini.n, r.upstream.n)
	}
	return fmt.Sprintf("%s (%s–%s, p=%.3f)", fmtTimes(r.times), fmtTimes(r.lo), fmtTimes(r.hi), r.p)
}

func fmtTimes(x float64) string {
	switch {
	case math.IsInf(x, 0) || math.IsNaN(x):
		return "∞"
	case x >= 10:
		return fmt.Sprintf("%.1f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// fmtValue formats a median in its tidied unit (sec, B or a count).
func fmtValue(v float64, unit string) string {
	switch {
	case secUnit.MatchString(unit):
		d := v
		switch {
		case d >= 1:
			return fmt.Sprintf("%.2f s", d)
		case d >= 1e-3:
			return fmt.Sprintf("%.3g ms", d*1e3)
		default:
			return fmt.Sprintf("%.3g µs", d*1e6)
		}
	case strings.Contains(unit, "B"):
		switch {
		case v >= 1<<20:
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%.1f KiB", v/(1<<10))
		default:
			return fmt.Sprintf("%.0f B", v)
		}
	}
	return fmt.Sprintf("%.3g", v)
}

func (st stat) String() string { return fmtValue(st.Center, "") }

const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// replaceBetweenMarkers replaces the lines between file's marker lines
// with body.
func replaceBetweenMarkers(file, body string) error {
	doc, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	before, rest, ok1 := strings.Cut(string(doc), beginMarker+"\n")
	_, after, ok2 := strings.Cut(rest, endMarker+"\n")
	if !ok1 || !ok2 {
		return fmt.Errorf("%s: no %s line followed by an %s line", file, beginMarker, endMarker)
	}
	return os.WriteFile(file, []byte(before+beginMarker+"\n"+body+endMarker+"\n"+after), 0o644)
}

// writeDoc writes the full report: the targets, the plot, benchstat's
// comparison.
func writeDoc(doc, stat string, s *samples) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\nGenerated by `make bench-readme` (hack/bench/cmd/benchreport) from [bench.txt](bench.txt): "+
		"every round of every benchmark in hack/bench, run on miniapiserver (mini) and on kube-apiserver with its own etcd (upstream), "+
		"both built from source, interleaved round by round (%s). Medians with their 95%% confidence intervals; "+
		"ratios are upstream's median over ours, with the interval their medians' intervals give, and a Mann–Whitney U test: "+
		"\"~\" where it shows no difference at α = 0.05. What each benchmark measures: its doc comment in hack/bench.\n\n",
		strings.Join(s.config, ", "))
	b.WriteString("## Targets\n\n")
	b.WriteString(targetsTable(s))
	if plot, err := plotFanout(s, filepath.Join(filepath.Dir(doc), "bench-fanout.svg")); err != nil {
		return err
	} else if plot {
		b.WriteString("\n## Watch fan-out latency\n\n![p50 and p99 delivery latency by watcher count](bench-fanout.svg)\n")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(doc), "bench-informers-heap.svg")); err == nil {
		b.WriteString("\n## Informer sync: server heap over time\n\n![heap in use while 16 informers sync](bench-informers-heap.svg)\n")
	}
	if stat != "" {
		text, err := os.ReadFile(stat)
		if err != nil {
			return err
		}
		b.WriteString("\n## Every benchmark (benchstat, kube-apiserver as the base)\n\n```\n")
		b.Write(text)
		b.WriteString("```\n")
	}
	return os.WriteFile(doc, []byte(b.String()), 0o644)
}
