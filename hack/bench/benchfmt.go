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
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// writeBenchfmt writes every sample the report holds in the Go benchmark
// format, one line per sample, so that benchstat compares them with their
// confidence intervals and significance (make bench-upstream runs
// `benchstat -col /server`). Names are section/variant keys/server=mini or
// server=upstream; server-side figures that are one per round (heap
// growth, p99) are extra units on the round's line.
func (r report) writeBenchfmt(w io.Writer) error {
	b := &samples{}
	b.printf("goos: %s\ngoarch: %s\npkg: %s\n", runtime.GOOS, runtime.GOARCH, r.version)
	r.benchfmtStarts(b)
	r.benchfmtLists(b)
	r.benchfmtCRDs(b)
	r.benchfmtWatch(b)
	r.benchfmtHeap(b)
	r.benchfmtInformers(b)
	r.benchfmtLatencies(b)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeBenchfmtFile(path string, r report) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-benchfmt: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return r.writeBenchfmt(f)
}

type samples struct{ strings.Builder }

func (b *samples) printf(format string, args ...any) { fmt.Fprintf(b, format, args...) }

// times writes one line per sample of name, in ns/op.
func (b *samples) times(name string, times []time.Duration) {
	for _, t := range times {
		b.printf("Benchmark%s 1 %d ns/op\n", name, t.Nanoseconds())
	}
}

// pair writes ours and upstream's samples of name.
func (b *samples) pair(name string, ours, upstream []time.Duration) {
	b.times(name+"/server=mini", ours)
	b.times(name+"/server=upstream", upstream)
}

// key is a name element of s: no spaces or slashes.
func key(s string) string {
	return strings.NewReplacer(" ", "-", "/", "-", ",", "", "=", "-").Replace(strings.ToLower(s))
}

func listName(section string, v listVariant) string {
	return fmt.Sprintf("%s/format=%s/limit=%d/rv=%s", section, key(v.encoding), v.limit, key(cmp.Or(v.rv, "none")))
}

func (r report) benchfmtStarts(b *samples) {
	if r.upstream != nil && len(r.upstream.starts.upstream.runs) > 0 {
		b.pair("StartToReady/data=empty", r.upstream.starts.ours.readyTimes(), r.upstream.starts.upstream.readyTimes())
	} else {
		b.times("StartToReady/data=empty/server=mini", r.empty.readyTimes())
	}
	b.times("StartToReady/data=populated/server=mini", r.populated.readyTimes())
	if u := r.crds.upstream; u != nil {
		b.pair("StartToReady/data=crds", r.crds.starts.readyTimes(), u.servedTimes())
	} else {
		b.times("StartToReady/data=crds/server=mini", r.crds.starts.readyTimes())
	}
}

func (r report) benchfmtLists(b *samples) {
	if r.upstream != nil {
		for _, p := range r.upstream.lists {
			b.pair(listName("List", p.ours.variant), p.ours.times, p.upstream.times)
		}
		for _, p := range r.upstream.rv0 {
			b.pair(listName("List", p.ours.variant), p.ours.times, p.upstream.times)
		}
	} else {
		for _, st := range r.lists {
			b.times(listName("List", st.variant)+"/server=mini", st.times)
		}
	}
	for _, st := range r.rv0.etcd {
		b.times(listName("ListFromEtcd", st.variant)+"/server=mini", st.times)
	}
	for _, run := range []paginationRun{r.pagination.cache, r.pagination.etcd} {
		for _, st := range run.lists {
			b.times(listName("Paginate", st.variant)+"/storage="+run.path.name+"/server=mini", st.times)
		}
	}
	if u := r.pagination.upstream; u != nil {
		for _, p := range u.pairs {
			b.pair(listName("Paginate", p.ours.variant)+"/storage=cache", p.ours.times, p.upstream.times)
		}
	}
}

func (r report) benchfmtCRDs(b *samples) {
	if u := r.crds.upstream; u != nil {
		for _, p := range u.lists {
			b.pair(listName("ListCustomResources", p.ours.variant), p.ours.times, p.upstream.times)
		}
		return
	}
	for _, run := range []crListRun{r.crds.cache, r.crds.etcd} {
		for _, st := range run.lists {
			b.times(listName("ListCustomResources", st.variant)+"/storage="+run.path.name+"/server=mini", st.times)
		}
	}
}

// benchfmtWatch writes each fan-out run's delivery latency percentiles and
// each throughput run's time per write and per delivered event: one sample
// per run.
func (r report) benchfmtWatch(b *samples) {
	runs := r.watch
	if r.upstream != nil {
		runs = append(runs, r.upstream.watch...)
	}
	for _, run := range runs {
		server, storage := "mini", run.path
		if run.path == upstreamWatchPath {
			server, storage = "upstream", "cache"
		}
		if len(run.latencies) == 0 {
			continue
		}
		b.printf("BenchmarkWatchFanout/watchers=%d/storage=%s/server=%s 1 %d p50-ns %d p99-ns\n", run.watchers, storage, server,
			percentile(run.latencies, 0.5).Nanoseconds(), percentile(run.latencies, 0.99).Nanoseconds())
	}
	throughput := r.throughput.runs
	if u := r.throughput.upstream; u != nil {
		throughput = append(throughput, *u)
	}
	for _, run := range throughput {
		if run.updates == 0 || run.events == 0 {
			continue
		}
		server, storage := "mini", run.path.name
		if storage == "" {
			server, storage = "upstream", "cache"
		}
		b.printf("BenchmarkThroughput/storage=%s/server=%s 1 %d ns/write %d ns/event\n", storage, server,
			run.writing.Nanoseconds()/int64(run.updates), run.delivered.Nanoseconds()/run.events)
	}
}

// benchfmtHeap writes the heap per ConfigMap after start and after the
// LISTs: one sample per run.
func (r report) benchfmtHeap(b *samples) {
	write := func(server string, h heapPerObject) {
		if h.objects == 0 || h.before == 0 {
			return
		}
		b.printf("BenchmarkHeapPerObject/server=%s 1 %.0f start-B/object %.0f listed-B/object\n", server, h.perObject(h.before), h.perObject(h.after))
	}
	write("mini", r.throughput.heap)
	if h := r.throughput.upstreamHeap; h != nil {
		write("upstream", *h)
	}
}

// benchfmtInformers writes each informer round's sync time and peak heap
// growth.
func (r report) benchfmtInformers(b *samples) {
	write := func(server string, st informerStats) {
		for _, round := range st.rounds {
			b.printf("BenchmarkInformerSync/mode=%s/server=%s 1 %d ns/op %.0f peak-heap-B\n", key(st.mode.name), server, round.sync.Nanoseconds(), round.growth())
		}
	}
	write("mini", r.informers.watchList)
	write("mini", r.informers.list)
	if u := r.informers.upstream; u != nil {
		write("upstream", u.watchList)
		write("upstream", u.list)
	}
}

// benchfmtLatencies writes the per-request latencies of the admission and
// rbac sections, the envtests' per-test times and the stops and restarts.
func (r report) benchfmtLatencies(b *samples) {
	admission := func(server string, run admissionRun) {
		for i, times := range run.variants() {
			b.times(fmt.Sprintf("CreateWithAdmission/admission=%s/server=%s", key(admissionVariants[i]), server), times)
		}
	}
	admission("mini", r.admission.ours)
	if r.admission.upstream != nil {
		admission("upstream", *r.admission.upstream)
	}
	rbac := func(server string, run rbacRun) {
		for i, times := range run {
			b.times(fmt.Sprintf("RBAC/op=%s/server=%s", key(rbacOps[i]), server), times)
		}
	}
	rbac("mini", r.rbac.ours)
	if r.rbac.upstream != nil {
		rbac("upstream", *r.rbac.upstream)
	}
	envtests := func(server string, run envtestsRun) {
		b.times("EnvtestStart/server="+server, run.starts)
		b.times("EnvtestFirstCreate/server="+server, run.firstCreates)
		b.times("EnvtestStop/server="+server, run.stops)
	}
	envtests("mini", r.envtests.ours)
	if r.envtests.upstream != nil {
		envtests("upstream", *r.envtests.upstream)
	}
	stops := r.stops
	if r.upstream != nil && len(r.upstream.stops.runs) > 0 {
		stops = append(stops, r.upstream.stops)
	}
	for _, st := range stops {
		server, storage := "mini", st.path.name
		if st.upstream {
			server, storage = "upstream", "cache"
		}
		b.times(fmt.Sprintf("Stop/watches=%d/storage=%s/server=%s", st.watches, storage, server), st.stopTimes())
	}
	restarts := []restartStats{r.restarts.resume, r.restarts.relist}
	if r.restarts.upstream != nil {
		restarts = append(restarts, *r.restarts.upstream)
	}
	for _, st := range restarts {
		name := "RestartResync/server=mini" // kube-apiserver's twin: its own default
		switch st.mode.name {
		case upstreamRestartMode.name:
			name = "RestartResync/server=upstream"
		case relistMode.name:
			name = "RestartResyncWithoutResumption/server=mini"
		}
		b.times(name, st.resyncTimes())
	}
}
