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
	"strings"
)

// A target is what a benchmark should show, one of three kinds: ours
// faster than upstream's by at least faster (upstream's median over ours);
// ours at most atMost (in the tidied unit: sec, B, a count); or, with
// than, ours at most atMost times our own median of the benchmark than.
// Ours is the server mini, or server if set (assets: the binary's envtest
// assets under controller-runtime's envtest).
type target struct {
	what       string // the row's label
	name, unit string
	faster     float64
	atMost     float64
	than       string
	server     string
}

// ours is the server kind the target judges.
func (t target) ours() string {
	if t.server != "" {
		return t.server
	}
	return "mini"
}

// The targets of the open and resolved issues.
var targets = []target{
	{what: "start to ready, empty data dir", name: "StartToReady/data=empty", unit: "sec/op", faster: 10},
	{what: "start to ready, empty data dir", name: "StartToReady/data=empty", unit: "sec/op", atMost: 1},
	{what: "start to ready, installing 20 CRDs", name: "StartToReady/data=crds", unit: "sec/op", atMost: 1},
	{what: "LIST 10,000 ConfigMaps, JSON", name: "List/cache=on/format=json/limit=0/rv=none", unit: "sec/op", faster: 1.5},
	{what: "LIST 10,000 ConfigMaps, JSON, paged by 500", name: "List/cache=on/format=json/limit=500/rv=none", unit: "sec/op", faster: 1.5},
	{what: "LIST 10,000 ConfigMaps, protobuf", name: "List/cache=on/format=protobuf/limit=0/rv=none", unit: "sec/op", faster: 1.5},
	{what: "LIST 10,000 ConfigMaps, protobuf, paged by 500", name: "List/cache=on/format=protobuf/limit=500/rv=none", unit: "sec/op", faster: 1.5},
	{what: "LIST RV=0, JSON", name: "List/cache=on/format=json/limit=0/rv=0", unit: "sec/op", faster: 1.5},
	{what: "LIST RV=0, protobuf", name: "List/cache=on/format=protobuf/limit=0/rv=0", unit: "sec/op", faster: 1.5},
	{what: "LIST at an exact RV, JSON", name: "List/cache=on/format=json/limit=0/rv=exact", unit: "sec/op", faster: 3},
	{what: "LIST at an exact RV, protobuf", name: "List/cache=on/format=protobuf/limit=0/rv=exact", unit: "sec/op", faster: 3},
	{what: "LIST at an exact RV, protobuf, paged by 500", name: "List/cache=on/format=protobuf/limit=500/rv=exact", unit: "sec/op", faster: 3},
	{what: "LIST RV=0 from the cache over from etcd, protobuf", name: "List/cache=on/format=protobuf/limit=0/rv=0", unit: "sec/op", atMost: 1.0 / 3, than: "List/cache=off/format=protobuf/limit=0/rv=0"},
	{what: "LIST 10,000 custom resources, JSON", name: "ListCustomResources/cache=on/format=json/limit=0/rv=none", unit: "sec/op", faster: 1.5},
	{what: "LIST 10,000 custom resources, JSON, paged by 500", name: "ListCustomResources/cache=on/format=json/limit=500/rv=none", unit: "sec/op", faster: 1.5},
	{what: "page through 50,000 ConfigMaps, JSON", name: "Paginate/cache=on/format=json/limit=500", unit: "sec/op", faster: 1.5},
	{what: "page through 50,000 ConfigMaps, protobuf", name: "Paginate/cache=on/format=protobuf/limit=500", unit: "sec/op", faster: 1.5},
	{what: "paged over one-request LIST from the cache, JSON", name: "Paginate/cache=on/format=json/limit=500", unit: "sec/op", atMost: 1.25, than: "Paginate/cache=on/format=json/limit=0"},
	{what: "paged over one-request LIST from the cache, protobuf", name: "Paginate/cache=on/format=protobuf/limit=500", unit: "sec/op", atMost: 1.25, than: "Paginate/cache=on/format=protobuf/limit=0"},
	{what: "watch fan-out, 1,000 watchers, p99 latency", name: "WatchFanout/watchers=1000/cache=on", unit: "p99-sec", faster: 1.5},
	{what: "16 informers syncing by LIST", name: "InformerSync/mode=list", unit: "sec/op", faster: 1.25},
	{what: "stop with 1,000 open watches", name: "Stop/watches=1000/cache=on", unit: "sec/op", atMost: 0.1},
	{what: "ConfigMap informer relists across a restart", name: "RestartResync/resumption=on", unit: "relists-configmaps", atMost: 0},
	{what: "Secret informer relists across a restart", name: "RestartResync/resumption=on", unit: "relists-secrets", atMost: 0},
	{what: "Pod informer relists across a restart", name: "RestartResync/resumption=on", unit: "relists-pods", atMost: 0},
	{what: "8 parallel envtest suites, wall time", name: "EnvtestSuite", unit: "sec/op", faster: 5},
	{what: "8 parallel envtest suites, slowest first create", name: "EnvtestSuite", unit: "max-first-create-sec", atMost: 0.1},
	{what: "8 parallel envtest suites, stock envtest on the binary's assets, wall time", name: "EnvtestSuite", unit: "sec/op", faster: 5, server: "assets"},
	{what: "8 parallel envtest suites, stock envtest on the binary's assets, slowest first create", name: "EnvtestSuite", unit: "max-first-create-sec", atMost: 0.1, server: "assets"},
	{what: "8 parallel envtest suites, stock envtest on the binary's assets, environment start (median)", name: "EnvtestSuite", unit: "start-sec", atMost: 0.5, server: "assets"},
}

// check is the target's verdict and the figure it is judged on.
func (t target) check(s *samples) (figure, verdict string) {
	switch {
	case t.faster > 0:
		r, ok := s.ratio(t.name, t.unit, t.ours())
		if !ok {
			return "", "not measured"
		}
		switch {
		case !r.significant():
			return r.String(), "no difference: **missed**"
		case r.times >= t.faster:
			return r.String(), "met"
		}
		return r.String(), "**missed**"
	case t.than != "":
		ours, ok1 := s.stat(t.name, t.unit, t.ours())
		base, ok2 := s.stat(t.than, t.unit, t.ours())
		if !ok1 || !ok2 {
			return "", "not measured"
		}
		x := ours.Center / base.Center
		return fmtTimes(x), metOrMissed(x <= t.atMost)
	}
	ours, ok := s.stat(t.name, t.unit, t.ours())
	if !ok {
		return "", "not measured"
	}
	return fmtValue(ours.Center, t.unit), metOrMissed(ours.Center <= t.atMost)
}

func metOrMissed(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

func (t target) goal() string {
	switch {
	case t.faster > 0:
		return fmt.Sprintf("ours ≥ %g× faster", t.faster)
	case t.than != "":
		return fmt.Sprintf("≤ %s", fmtTimes(t.atMost))
	}
	return "≤ " + fmtValue(t.atMost, t.unit)
}

// targetsTable is every target with its figure and verdict.
func targetsTable(s *samples) string {
	var b strings.Builder
	b.WriteString("| target | benchmark | unit | figure | goal | verdict |\n|---|---|---|---|---|---|\n")
	met := 0
	for _, t := range targets {
		figure, verdict := t.check(s)
		if verdict == "met" {
			met++
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", t.what, t.name, t.unit, figure, t.goal(), verdict)
	}
	fmt.Fprintf(&b, "\n%d of %d targets met.\n", met, len(targets))
	return b.String()
}

// headline are the README's rows: a benchmark, unit and (if not mini) our
// server kind each.
var headline = []struct{ what, name, unit, server string }{
	{"start to ready, empty data dir", "StartToReady/data=empty", "sec/op", ""},
	{"stop (SIGTERM to exit)", "StartToReady/data=empty", "stop-sec/op", ""},
	{"LIST 10,000 ConfigMaps, JSON", "List/cache=on/format=json/limit=0/rv=none", "sec/op", ""},
	{"LIST 10,000 ConfigMaps, protobuf", "List/cache=on/format=protobuf/limit=0/rv=none", "sec/op", ""},
	{"LIST at an exact resourceVersion, JSON", "List/cache=on/format=json/limit=0/rv=exact", "sec/op", ""},
	{"consistent LIST of a resource just after a write to another (a controller test's step)", "ListAfterWrite", "list-sec/op", ""},
	{"LIST 10,000 custom resources, JSON", "ListCustomResources/cache=on/format=json/limit=0/rv=none", "sec/op", ""},
	{"page through 50,000 ConfigMaps, JSON", "Paginate/cache=on/format=json/limit=500", "sec/op", ""},
	{"watch fan-out to 1,000 watchers, p99", "WatchFanout/watchers=1000/cache=on", "p99-sec", ""},
	{"16 informers syncing 100 MiB by watch-list", "InformerSync/mode=watch-list", "sec/op", ""},
	{"relists of a ConfigMap informer across a restart", "RestartResync/resumption=on", "relists-configmaps", ""},
	{"8 parallel controller tests, each its own environment (vs controller-runtime's envtest)", "EnvtestSuite", "sec/op", ""},
	{"the same on stock envtest with the binary's assets (`envtest-assets`)", "EnvtestSuite", "sec/op", "assets"},
}

// headlineTable is the README's table: medians and ratios.
func headlineTable(s *samples) string {
	var b strings.Builder
	b.WriteString("| benchmark | ours | kube-apiserver | upstream / ours |\n|---|---|---|---|\n")
	for _, h := range headline {
		ours := cmp.Or(h.server, "mini")
		m, ok1 := s.stat(h.name, h.unit, ours)
		u, ok2 := s.stat(h.name, h.unit, "upstream")
		if !ok1 || !ok2 {
			continue
		}
		times := "–" // ours is 0
		if r, ok := s.ratio(h.name, h.unit, ours); ok {
			times = r.String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", h.what, fmtValue(m.Center, h.unit), fmtValue(u.Center, h.unit), times)
	}
	return b.String()
}
