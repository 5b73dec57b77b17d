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
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config holds the command-line flags.
type config struct {
	server     string   // absolute path of the miniapiserver binary
	serverFlag string   // -server as given, which the report shows
	serverArgs []string // extra flags for every server start
	sections   sections // which benchmarks to run
	starts     int      // start-to-ready samples per data dir
	lists      int      // timed full listings per LIST variant
	objects    int      // ConfigMaps in the populated data dir
	page       int      // limit for paged LISTs
	workers    int      // concurrent clients while populating
	gzip       bool     // let LIST responses be gzip-compressed
	readme     string   // README whose generated part to replace with the report; "": none
	benchfmt   string   // file to write every sample to in the Go benchmark format; "": none

	upstream     string   // -upstream: dir of kube-apiserver and etcd to compare with; "": none
	upstreamArgs []string // extra kube-apiserver flags

	crds int // CRDs installed by the crds section's starts
	crs  int // custom resources in its populated data dir

	watchers        []int         // watcher counts of the watch fan-out runs
	etcdWatchersMax int           // largest watcher count also run without the watch cache
	watchersPerConn int           // watch streams per HTTP/2 connection
	events          int           // timed ConfigMap updates per watch run
	eventInterval   time.Duration // pause between the starts of two updates; 0: back to back

	informers      int           // concurrent informers per round
	informerRounds int           // rounds per informer variant
	secrets        int           // Secrets the informers sync
	secretSize     int           // bytes of data per Secret
	heapSample     time.Duration // heap sampling period during informer rounds

	paginationObjects int // ConfigMaps in the pagination section's data dir
	paginationLimit   int // limit of its paged LISTs
	paginationRuns    int // timed listings per pagination variant
	firstPages        int // first pages issued in its memory measurement
	writeRate         int // ConfigMap updates per second meanwhile

	throughputWriters  int // concurrent writers in the throughput section
	throughputWatchers int // watchers that must each get every event
	throughputUpdates  int // updates per throughput run

	admissionCreates int // timed ConfigMap creates per admission variant

	envtests int // parallel controller tests of the envtests section

	rbacBindings int // RoleBindings in the rbac section's namespace
	rbacRounds   int // timed rounds of its LISTs and creates

	stopWatches    int // watches open when the stops section sends SIGTERM
	stopRounds     int // stops per storage path
	restartObjects int // ConfigMaps, Secrets and Pods (each) the restarts section's informers watch
	restartRounds  int // restarts per EfficientWatchResumption setting
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: FAILED:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var cfg config
	var extra, only, watchers, upstreamArgs string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&cfg.server, "server", "bin/miniapiserver", "path of the miniapiserver binary to measure")
	fs.StringVar(&extra, "server-args", "", "extra flags for every server start, space separated (e.g. --feature-gates=APIListChunking=false)")
	fs.StringVar(&only, "only", strings.Join(allSections, ","), "comma-separated sections to run: "+strings.Join(allSections, ", "))
	fs.IntVar(&cfg.starts, "starts", 7, "start-to-ready samples per data dir")
	fs.IntVar(&cfg.lists, "lists", 10, "timed full listings per LIST variant (after one untimed warm-up)")
	fs.IntVar(&cfg.objects, "objects", 10000, "ConfigMaps (~1 KiB each) to create in the populated data dir")
	fs.IntVar(&cfg.page, "page", 500, "limit for paged LISTs")
	fs.IntVar(&cfg.workers, "workers", 16, "concurrent clients creating the ConfigMaps")
	fs.BoolVar(&cfg.gzip, "gzip", true, "accept gzip-compressed LIST responses, as client-go does by default")
	fs.StringVar(&cfg.readme, "readme", "", "also write the report (below its heading) into this Markdown file, "+
		"replacing the lines between its "+beginMarker+" and "+endMarker+" lines")
	fs.StringVar(&cfg.benchfmt, "benchfmt", "", "also write every sample to this file in the Go benchmark format, for benchstat -col /server")
	fs.StringVar(&cfg.upstream, "upstream", "", "directory holding kube-apiserver and etcd (hack/upstream/build.sh builds them): "+
		"run the "+joinAnd(upstreamSections)+" sections on both servers, interleaved, and compare")
	fs.StringVar(&upstreamArgs, "upstream-args", "", "extra kube-apiserver flags with -upstream, space separated (e.g. --enable-priority-and-fairness=false)")
	fs.IntVar(&cfg.crds, "crds", 20, "CustomResourceDefinitions the crds section's servers install on start (--crds)")
	fs.IntVar(&cfg.crs, "crs", 10000, "custom resources (~1 KiB each) in the crds section's own data dir")
	fs.StringVar(&watchers, "watchers", "100,1000", "comma-separated watcher counts of the watch fan-out runs")
	fs.IntVar(&cfg.etcdWatchersMax, "etcd-watchers-max", 1000, "run the watch fan-out without the watch cache too for watcher counts up to this (0: never)")
	fs.IntVar(&cfg.watchersPerConn, "watchers-per-conn", 100, "watch streams per HTTP/2 connection")
	fs.IntVar(&cfg.events, "events", 1000, "timed ConfigMap updates per watch fan-out run")
	fs.DurationVar(&cfg.eventInterval, "event-interval", 0, "pause between the starts of two updates in the watch fan-out (0: back to back)")
	fs.IntVar(&cfg.informers, "informers", 16, "concurrent Secret informers, each with its own connection")
	fs.IntVar(&cfg.informerRounds, "informer-rounds", 3, "informer syncs per variant")
	fs.IntVar(&cfg.secrets, "secrets", 100, "Secrets the informers sync")
	fs.IntVar(&cfg.secretSize, "secret-size", 1<<20, "bytes of (random) data per Secret")
	fs.DurationVar(&cfg.heapSample, "heap-sample", 20*time.Millisecond, "how often to sample the server heap while informers sync")
	fs.IntVar(&cfg.paginationObjects, "pagination-configmaps", 50000, "ConfigMaps (~1 KiB each) in the pagination section's own data dir")
	fs.IntVar(&cfg.paginationLimit, "pagination-limit", 500, "limit of the pagination section's paged LISTs")
	fs.IntVar(&cfg.paginationRuns, "pagination-runs", 5, "timed listings per pagination variant (after one verified untimed one)")
	fs.IntVar(&cfg.firstPages, "pagination-first-pages", 1000, "first pages (never continued) issued while measuring the cache's heap growth")
	fs.IntVar(&cfg.writeRate, "pagination-write-rate", 50, "ConfigMap updates per second while those first pages are issued")
	fs.IntVar(&cfg.throughputWriters, "throughput-writers", 16, "concurrent clients updating ConfigMaps in the throughput section")
	fs.IntVar(&cfg.throughputWatchers, "throughput-watchers", 10, "ConfigMap watches that must each get every event in the throughput section")
	fs.IntVar(&cfg.throughputUpdates, "throughput-updates", 5000, "ConfigMap updates per throughput run")
	fs.IntVar(&cfg.admissionCreates, "admission-creates", 500, "timed ConfigMap creates per admission variant (none, a policy, a webhook)")
	fs.IntVar(&cfg.envtests, "envtests", 8, "controller tests the envtests section runs at once, each with an environment of its own")
	fs.IntVar(&cfg.rbacBindings, "rbac-bindings", 1000, "RoleBindings (one of them the bound user's) in the rbac section's namespace")
	fs.IntVar(&cfg.rbacRounds, "rbac-rounds", 300, "timed rounds of the rbac section (a LIST and a create as the admin and as the bound user)")
	fs.IntVar(&cfg.stopWatches, "stop-watches", 1000, "ConfigMap watches open when the stops section sends SIGTERM")
	fs.IntVar(&cfg.stopRounds, "stop-rounds", 3, "stops with open watches per storage path (watch cache, etcd)")
	fs.IntVar(&cfg.restartObjects, "restart-objects", 100, "ConfigMaps, Secrets and Pods (of each) that the restarts section's informers watch")
	fs.IntVar(&cfg.restartRounds, "restart-rounds", 3, "server restarts under running informers per EfficientWatchResumption setting")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := cfg.validate(only, watchers); err != nil {
		return config{}, err
	}
	abs, err := filepath.Abs(cfg.server)
	if err != nil {
		return config{}, fmt.Errorf("resolving -server: %w", err)
	}
	cfg.server, cfg.serverFlag = abs, cfg.server
	cfg.serverArgs = strings.Fields(extra)
	cfg.upstreamArgs = strings.Fields(upstreamArgs)
	return cfg, nil
}

// validate parses -only and -watchers into cfg and checks the numbers.
func (cfg *config) validate(only, watchers string) error {
	var err error
	if cfg.sections, err = parseSections(only); err != nil {
		return err
	}
	if cfg.watchers, err = parseCounts(watchers); err != nil {
		return fmt.Errorf("-watchers: %w", err)
	}
	for _, n := range []int{cfg.starts, cfg.lists, cfg.objects, cfg.page, cfg.workers, cfg.crds, cfg.crs, cfg.watchersPerConn,
		cfg.events, cfg.informers, cfg.informerRounds, cfg.secrets, cfg.secretSize,
		cfg.paginationObjects, cfg.paginationLimit, cfg.paginationRuns, cfg.firstPages, cfg.writeRate,
		cfg.throughputWriters, cfg.throughputWatchers, cfg.throughputUpdates,
		cfg.envtests, cfg.rbacBindings, cfg.rbacRounds, cfg.stopWatches, cfg.stopRounds, cfg.restartObjects, cfg.restartRounds} {
		if n < 1 {
			return errors.New("-starts, -lists, -objects, -page, -workers, -crds, -crs, -watchers-per-conn, -events, " +
				"-informers, -informer-rounds, -secrets, -secret-size and the -pagination-*, -throughput-*, -envtests, -rbac-*, -stop-* and -restart-* counts must be positive")
		}
	}
	if cfg.upstream != "" && !slices.ContainsFunc(upstreamSections, cfg.sections.has) {
		return errors.New("-upstream compares the " + joinAnd(upstreamSections) + " sections, and -only runs none of them")
	}
	if cfg.etcdWatchersMax < 0 || cfg.eventInterval < 0 || cfg.heapSample <= 0 {
		return errors.New("-etcd-watchers-max and -event-interval must not be negative, -heap-sample must be positive")
	}
	return nil
}

// run performs every selected benchmark under one temporary root dir and
// writes the report to out and, with -readme, into the README.
func run(ctx context.Context, cfg config, out io.Writer) (err error) {
	began := time.Now()
	if cfg.readme != "" {
		// Fail now rather than after the benchmarks.
		if err := checkReadme(cfg.readme); err != nil {
			return fmt.Errorf("-readme: %w", err)
		}
	}
	root, err := os.MkdirTemp("", "miniapiserver-bench-")
	if err != nil {
		return fmt.Errorf("creating temp dir: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(root)) }()

	r := report{cfg: cfg, os: runtime.GOOS, arch: runtime.GOARCH, cpus: runtime.NumCPU()}
	if r.version, err = binaryVersion(ctx, cfg.server); err != nil {
		return err
	}
	var ub *upstreamBench
	if cfg.upstream != "" {
		bins, err := findUpstream(ctx, cfg.upstream, cfg.upstreamArgs)
		if err != nil {
			return err
		}
		if ub, err = newUpstreamBench(bins, root); err != nil {
			return err
		}
		r.upstream = &upstreamResult{bins: bins}
	}
	if err := runConfigMapSections(ctx, cfg, root, &r, ub); err != nil {
		return err
	}
	if cfg.sections.has("crds") {
		if r.crds, err = benchCRDs(ctx, cfg, root, ub); err != nil {
			return err
		}
	}
	if cfg.sections.has("pagination") {
		if r.pagination, err = benchPagination(ctx, cfg, root, ub); err != nil {
			return err
		}
	}
	if cfg.sections.has("watch") {
		var upstream []watchRun
		if r.watch, upstream, err = benchWatch(ctx, cfg, root, ub); err != nil {
			return err
		}
		if r.upstream != nil {
			r.upstream.watch = upstream
		}
	}
	if cfg.sections.has("throughput") {
		if r.throughput, err = benchThroughput(ctx, cfg, root, filepath.Join(root, "populated"), ub); err != nil {
			return err
		}
	}
	if cfg.sections.has("informers") {
		if r.informers, err = benchInformers(ctx, cfg, root, ub); err != nil {
			return err
		}
		if err := writeInformersHeap(cfg, &r.informers); err != nil {
			return err
		}
	}
	if cfg.sections.has("admission") {
		if r.admission, err = benchAdmission(ctx, cfg, root, ub); err != nil {
			return err
		}
	}
	if cfg.sections.has("envtests") {
		if r.envtests, err = benchEnvtests(ctx, cfg, root, ub); err != nil {
			return err
		}
	}
	if cfg.sections.has("rbac") {
		if r.rbac, err = benchRBAC(ctx, cfg, root, ub); err != nil {
			return err
		}
	}
	if cfg.sections.has("stops") {
		var upstream stopStats
		if r.stops, upstream, err = benchStops(ctx, cfg, root, ub); err != nil {
			return err
		}
		if r.upstream != nil {
			r.upstream.stops = upstream
		}
	}
	if cfg.sections.has("restarts") {
		if r.restarts, err = benchRestarts(ctx, cfg, root, ub); err != nil {
			return err
		}
	}
	r.elapsed = time.Since(began)
	if err := r.write(out); err != nil {
		return err
	}
	if cfg.benchfmt != "" {
		if err := writeBenchfmtFile(cfg.benchfmt, r); err != nil {
			return err
		}
	}
	if cfg.readme != "" {
		return writeReadme(cfg, r)
	}
	return nil
}

// writeReadme replaces the generated part of the -readme file with the
// report's body.
func writeReadme(cfg config, r report) error {
	body, err := r.body()
	if err != nil {
		return err
	}
	if err := updateReadme(cfg.readme, body); err != nil {
		return fmt.Errorf("-readme: %w", err)
	}
	if ran := r.ranSections(); len(ran) < len(allSections) {
		progress("%s: the generated part now holds only the sections %s", cfg.readme, strings.Join(ran, ", "))
	}
	progress("%s: the report is between its %s and %s lines", cfg.readme, beginMarker, endMarker)
	return nil
}

// runConfigMapSections runs the sections that share the data dir populated
// with cfg.objects ConfigMaps: starts, lists and rv0. With ub (-upstream),
// the empty data dir starts and the lists run on upstream too, interleaved
// with miniapiserver's, and upstream gets a populated data dir of its own.
func runConfigMapSections(ctx context.Context, cfg config, root string, r *report, ub *upstreamBench) error {
	var err error
	if cfg.sections.has("starts") {
		if ub != nil {
			r.upstream.starts, err = ub.benchEmptyStarts(ctx, cfg)
			r.empty = r.upstream.starts.ours
		} else {
			r.empty, err = benchEmptyStarts(ctx, cfg, root)
		}
		if err != nil {
			return err
		}
	}
	if !cfg.sections.has("starts") && !cfg.sections.has("lists") && !cfg.sections.has("rv0") {
		return nil
	}
	populated := filepath.Join(root, "populated")
	if r.populate, err = populate(ctx, cfg, populated, cfg.objects); err != nil {
		return err
	}
	if cfg.sections.has("starts") {
		if r.populated, err = measureStarts(ctx, cfg, "populated", func(int) string { return populated }, false); err != nil {
			return err
		}
	}
	if cfg.sections.has("lists") {
		if ub != nil {
			err = listsSideBySide(ctx, cfg, ub, populated, r)
		} else {
			r.lists, err = benchLists(ctx, cfg, populated)
		}
		if err != nil {
			return err
		}
	}
	if cfg.sections.has("rv0") {
		if r.rv0, err = benchRV0(ctx, cfg, populated); err != nil {
			return err
		}
		if ub != nil {
			return rv0SideBySide(ctx, cfg, ub, populated, r)
		}
	}
	return nil
}

// listsSideBySide populates upstream's own data dir, then runs the lists
// section on both servers.
func listsSideBySide(ctx context.Context, cfg config, ub *upstreamBench, populated string, r *report) error {
	upstreamPopulated := filepath.Join(ub.root, "upstream-populated")
	var err error
	if r.upstream.populate, err = ub.populate(ctx, cfg, upstreamPopulated, cfg.objects); err != nil {
		return err
	}
	r.lists, r.upstream.lists, err = ub.benchLists(ctx, cfg, populated, upstreamPopulated)
	return err
}

// rv0SideBySide takes the rv0 section's upstream figures from the lists
// section's side-by-side LISTs, which include them, or, if that did not
// run, populates upstream's own data dir and times them on both servers.
func rv0SideBySide(ctx context.Context, cfg config, ub *upstreamBench, populated string, r *report) error {
	if pairs := rv0Pairs(r.upstream.lists); len(pairs) == len(rv0Variants()) {
		r.upstream.rv0, r.upstream.rv0FromLists = pairs, true
		return nil
	}
	upstreamPopulated := filepath.Join(ub.root, "upstream-populated")
	var err error
	if r.upstream.populate, err = ub.populate(ctx, cfg, upstreamPopulated, cfg.objects); err != nil {
		return err
	}
	r.upstream.rv0, err = ub.benchRV0(ctx, cfg, populated, upstreamPopulated)
	return err
}

// binaryVersion is what the binary's --version prints, e.g.
// "miniapiserver v1.37.2".
func binaryVersion(ctx context.Context, server string) (string, error) {
	out, err := exec.CommandContext(ctx, server, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", server, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// allSections are the -only values, in the order they run.
var allSections = []string{"starts", "lists", "rv0", "crds", "pagination", "watch", "throughput", "informers", "admission", "envtests", "rbac", "stops", "restarts"}

// upstreamSections are the sections that -upstream runs on kube-apiserver
// too, in the order they run.
var upstreamSections = []string{"starts", "lists", "rv0", "crds", "pagination", "watch", "throughput", "informers", "admission", "envtests", "rbac", "stops", "restarts"}

// joinAnd is "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// sections is the set of benchmarks to run.
type sections map[string]bool

func (s sections) has(name string) bool { return s[name] }

func parseSections(only string) (sections, error) {
	s := sections{}
	for name := range strings.SplitSeq(only, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(allSections, name) {
			return nil, fmt.Errorf("-only: unknown section %q (want some of %s)", name, strings.Join(allSections, ","))
		}
		s[name] = true
	}
	return s, nil
}

// parseCounts parses "100,1000" into ascending distinct positive counts.
func parseCounts(list string) ([]int, error) {
	var counts []int
	for field := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", field)
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return slices.Compact(counts), nil
}
