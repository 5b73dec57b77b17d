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

// Command bench measures a miniapiserver binary side by side in one run and
// prints the results as Markdown tables. Its sections (select them with
// -only; all run by default):
//
//   - starts: start-to-ready on an empty data dir, and on a data dir that
//     already holds -objects ConfigMaps (time from exec to the ready line on
//     stdout);
//   - lists: LIST of those ConfigMaps in one request and paged with
//     limit=-page, each in JSON and protobuf: wall time per full listing, and
//     server-side bytes allocated per full listing (delta of
//     go_memstats_alloc_bytes_total);
//   - rv0: LIST with resourceVersion=0 of the same ConfigMaps, in JSON and
//     protobuf, from a server with --watch-cache=true and then from one with
//     --watch-cache=false on the same data dir: wall time and server bytes
//     per listing, and the etcd/cache ratios;
//   - crds: start-to-ready on a fresh data dir with -crds generated
//     CustomResourceDefinitions (structural schema, defaults, a CEL rule,
//     the status subresource) to install with --crds; then, on a data dir of
//     its own holding -crs custom resources of one of them, their LIST (JSON,
//     RV unset) in one request and paged with limit=-page, from a server
//     with --watch-cache=true and from one with --watch-cache=false: the
//     first LIST after each start, wall time and server bytes per listing,
//     and the etcd/cache ratios;
//   - pagination: KEP-4988 on -pagination-configmaps ConfigMaps of its own
//     data dir, on the default server and on one with --watch-cache=false:
//     paging through all of them with limit=-pagination-limit (first page
//     from the cache, continuations from its snapshots; or all from etcd)
//     and, from the cache, one unpaginated LIST, in JSON and protobuf; an
//     exact-resourceVersion LIST, whole and its first page, at an RV older
//     than 100 updates (a snapshot, or etcd's history); wall time and server
//     bytes per listing, the ratios, and how many of the cache's requests its
//     snapshots served. Then, on the default server only, the heap in use
//     after a forced GC before and after -pagination-first-pages first pages
//     issued while a writer updates -pagination-write-rate ConfigMaps a
//     second, against the cache's own size (the heaps after GC of the two
//     servers, subtracted);
//   - watch: watch fan-out. For each count in -watchers, that many JSON
//     watches of the ConfigMaps in one namespace, spread over HTTP/2
//     connections of -watchers-per-conn streams, while one writer updates a
//     ConfigMap -events times (-event-interval apart, or back to back):
//     delivery latency (p50, p99, max), server CPU time (from /proc) and
//     bytes allocated per delivered event, and bytes per event; with the
//     watch cache, and without it for the counts up to -etcd-watchers-max;
//     each run on a server of its own with a fresh data dir;
//   - throughput: events/s one resource sustains: -throughput-watchers
//     JSON watches of the ConfigMaps in one namespace, each of which must
//     get every event, while -throughput-writers clients merge-patch
//     ConfigMaps as fast as they can, -throughput-updates in all; with the
//     watch cache and without it, each on a fresh data dir. Then the
//     default server's heap in use after a forced GC on -objects ConfigMaps
//     (the lists section's data dir, or one of its own), before and after a
//     JSON and a protobuf LIST, minus that on an empty data dir, per object;
//   - informers: -informers client-go Secret informers, each with its own
//     connection, started at once against -secrets Secrets of -secret-size
//     bytes, with watch-list (client-go's default) and with LIST+WATCH
//     (client-go's WatchListClient gate turned off in the bench's process;
//     the server runs its defaults for both): time until all have synced,
//     and the server's peak heap growth (go_memstats_heap_inuse_bytes
//     sampled every -heap-sample, minus its value after a forced GC just
//     before the informers start, net of what the sampler's own /metrics
//     scrapes allocate, measured alone); -informer-rounds rounds, each of both
//     modes on one server. It writes an SVG of the heap over time of each
//     mode's median round: with -readme to bench-informers-heap.svg next
//     to the -readme file, which the report links, otherwise to a new file
//     in the temporary directory;
//   - admission: -admission-creates ConfigMap creates with no admission
//     configured, with one ValidatingAdmissionPolicy and with one
//     validating webhook served by the bench: latency, and what each adds;
//   - envtests: an operator's suite of -envtests controller tests at once,
//     each starting an environment of its own with a CRD, a manager whose
//     reconciler gives each custom resource a Deployment, creating one and
//     waiting for its Deployment: on pkg/envtest and, with -upstream, on
//     controller-runtime's envtest running the -upstream binaries; the
//     suite's wall time, each start, first create and stop;
//   - rbac: -rbac-rounds LISTs and creates of ConfigMaps as the admin and
//     as a user (a token-file token) whose RoleBinding is one of
//     -rbac-bindings in the namespace: latency, and what the user adds;
//   - stops: SIGTERM→exit of a server with -stop-watches ConfigMap watches
//     open (half with allowWatchBookmarks, -watchers-per-conn streams per
//     HTTP/2 connection), with the watch cache and with --watch-cache=false,
//     -stop-rounds times each, and how many watches ended with a final
//     BOOKMARK; a control stops the default server with only the bench's
//     own idle client connection open;
//   - restarts: KEP-1904. Informers on ConfigMaps, Secrets and Pods
//     (-restart-objects of each) across a restart of the server on the same
//     data dir and port, with EfficientWatchResumption (the default) and
//     with --feature-gates=EfficientWatchResumption=false, -restart-rounds
//     times each: relists per informer, and the time from the restarted
//     server's ready line until every informer has seen an object created
//     after it.
//
// With -upstream DIR (kube-apiserver and etcd, as hack/upstream/build.sh
// builds them from source), the starts section's empty data dir starts,
// the lists section (plus RV=0 and exact-RV LISTs), the pagination
// section's paged and unpaginated listings (on as many ConfigMaps in
// upstream's own etcd), the watch section's fan-out at every -watchers
// count, the informers section and the stops section's stops with
// -stop-watches watches also run on upstream kube-apiserver with its own
// etcd, interleaved with miniapiserver's runs, and the report compares the
// two (upstream.go, upstream_pki.go, upstream_bench.go, report_upstream.go;
// pagination.go, watch.go, informers.go, stops.go and their report*.go);
// so do the rv0 section's LISTs (the lists section's, when it ran), the
// crds section's starts (kube-apiserver on an etcd already holding the
// CRDs, until they are in discovery) and cache LISTs (crds_upstream.go),
// the throughput section's run with the watch cache, and the restarts
// section's restarts (kube-apiserver alone restarted, its etcd kept
// running); make bench-upstream does this. What else those sections
// measure runs on miniapiserver only.
//
// Usage (it is a module of its own, which the server's module does not
// build: run it with go -C hack/bench, paths absolute):
//
//	go -C hack/bench run . -server $PWD/bin/miniapiserver
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -objects 500 -starts 2 -lists 2 \
//		-watchers 50 -events 50 -secrets 10 -informer-rounds 1
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -only watch,informers
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -only crds -crds 20 -crs 2000 -starts 3 -lists 3
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -only pagination -pagination-configmaps 5000 \
//		-pagination-runs 2 -pagination-first-pages 100
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -only stops,restarts -stop-watches 200 -stop-rounds 2 \
//		-restart-objects 20 -restart-rounds 2
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -readme $PWD/docs/benchmarks.md
//	go -C hack/bench run . -server $PWD/bin/miniapiserver -only starts,lists -starts 3 -objects 2000 -lists 3 \
//		-upstream "$(dirname "$(hack/upstream/build.sh | head -n1)")"
//
// The report goes to stdout and progress to stderr. With -readme FILE it
// also replaces the lines between FILE's <!-- bench:begin --> and
// <!-- bench:end --> lines with the report below its heading (make
// bench-readme does this for docs/benchmarks.md), so its tables are never
// copied by hand. Every server it starts is stopped and every temporary data
// dir removed before it exits, on errors and on SIGINT/SIGTERM too.
//
// What is measured and how it is printed live apart. Each section's file
// (starts.go, lists.go, rv0.go, crds.go with crd_manifests.go,
// pagination.go, watch.go with watchers.go, throughput.go, informers.go, stops.go,
// restarts.go with restart_informers.go) runs servers and returns plain
// result structs; server.go, populate.go, clients.go, metrics.go and
// decode.go are what they share.
// report*.go turn the results into Markdown tables, notes and ratios against
// the targets; the prose around them (the summary line and the paragraph
// saying what each section measures) is prose.tmpl, with its data in
// prose.go. readme.go splices the report into the README.
package main
