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
//   - informers: -informers client-go Secret informers, each with its own
//     connection, started at once against -secrets Secrets of -secret-size
//     bytes, with watch-list (the server's default) and with
//     --feature-gates=ConsistentWatchList=false (LIST+WATCH): time until all
//     have synced, and the server's peak heap growth (go_memstats_heap_inuse_bytes
//     sampled every -heap-sample, minus its value after a forced GC just
//     before the informers start).
//
// Usage:
//
//	go run ./hack/bench -server bin/miniapiserver
//	go run ./hack/bench -server bin/miniapiserver -objects 500 -starts 2 -lists 2 \
//		-watchers 50 -events 50 -secrets 10 -informer-rounds 1
//	go run ./hack/bench -server bin/miniapiserver -only watch,informers
//	go run ./hack/bench -server bin/miniapiserver -only pagination -pagination-configmaps 5000 \
//		-pagination-runs 2 -pagination-first-pages 100
//
// The tables go to stdout and progress to stderr. Every server it starts is
// stopped and every temporary data dir removed before it exits, on errors and
// on SIGINT/SIGTERM too.
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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config holds the command-line flags.
type config struct {
	server     string   // path of the miniapiserver binary
	serverArgs []string // extra flags for every server start
	sections   sections // which benchmarks to run
	starts     int      // start-to-ready samples per data dir
	lists      int      // timed full listings per LIST variant
	objects    int      // ConfigMaps in the populated data dir
	page       int      // limit for paged LISTs
	workers    int      // concurrent clients while populating
	gzip       bool     // let LIST responses be gzip-compressed

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
	var extra, only, watchers string
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
	cfg.server = abs
	cfg.serverArgs = strings.Fields(extra)
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
	for _, n := range []int{cfg.starts, cfg.lists, cfg.objects, cfg.page, cfg.workers, cfg.watchersPerConn,
		cfg.events, cfg.informers, cfg.informerRounds, cfg.secrets, cfg.secretSize,
		cfg.paginationObjects, cfg.paginationLimit, cfg.paginationRuns, cfg.firstPages, cfg.writeRate} {
		if n < 1 {
			return errors.New("-starts, -lists, -objects, -page, -workers, -watchers-per-conn, -events, " +
				"-informers, -informer-rounds, -secrets, -secret-size and the -pagination-* counts must be positive")
		}
	}
	if cfg.etcdWatchersMax < 0 || cfg.eventInterval < 0 || cfg.heapSample <= 0 {
		return errors.New("-etcd-watchers-max and -event-interval must not be negative, -heap-sample must be positive")
	}
	return nil
}

// run performs every selected benchmark under one temporary root dir and
// writes the report to out.
func run(ctx context.Context, cfg config, out io.Writer) (err error) {
	began := time.Now()
	root, err := os.MkdirTemp("", "miniapiserver-bench-")
	if err != nil {
		return fmt.Errorf("creating temp dir: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(root)) }()

	r := report{cfg: cfg}
	if r.version, err = binaryVersion(ctx, cfg.server); err != nil {
		return err
	}
	if err := runConfigMapSections(ctx, cfg, root, &r); err != nil {
		return err
	}
	if cfg.sections.has("pagination") {
		if r.pagination, err = benchPagination(ctx, cfg, root); err != nil {
			return err
		}
	}
	if cfg.sections.has("watch") {
		if r.watch, err = benchWatch(ctx, cfg, root); err != nil {
			return err
		}
	}
	if cfg.sections.has("informers") {
		if r.informers, err = benchInformers(ctx, cfg, root); err != nil {
			return err
		}
	}
	r.elapsed = time.Since(began)
	return r.write(out)
}

// runConfigMapSections runs the sections that share the data dir populated
// with cfg.objects ConfigMaps: starts, lists and rv0.
func runConfigMapSections(ctx context.Context, cfg config, root string, r *report) error {
	var err error
	if cfg.sections.has("starts") {
		if r.empty, err = benchEmptyStarts(ctx, cfg, root); err != nil {
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
		if r.lists, err = benchLists(ctx, cfg, populated); err != nil {
			return err
		}
	}
	if cfg.sections.has("rv0") {
		if r.rv0, err = benchRV0(ctx, cfg, populated); err != nil {
			return err
		}
	}
	return nil
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
var allSections = []string{"starts", "lists", "rv0", "pagination", "watch", "informers"}

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
