// Command bench measures a miniapiserver binary side by side in one run and
// prints the results as Markdown tables:
//
//   - start-to-ready on an empty data dir, and on a data dir that already holds
//     -objects ConfigMaps (time from exec to the ready line on stdout);
//   - LIST of those ConfigMaps in one request and paged with limit=-page, each
//     in JSON and protobuf: wall time per full listing, and server-side bytes
//     allocated per full listing (delta of go_memstats_alloc_bytes_total).
//
// Usage:
//
//	go run ./hack/bench -server bin/miniapiserver
//	go run ./hack/bench -server bin/miniapiserver -objects 500 -starts 2 -lists 2
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
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// config holds the command-line flags.
type config struct {
	server     string   // path of the miniapiserver binary
	serverArgs []string // extra flags for every server start
	starts     int      // start-to-ready samples per data dir
	lists      int      // timed full listings per LIST variant
	objects    int      // ConfigMaps in the populated data dir
	page       int      // limit for paged LISTs
	workers    int      // concurrent clients while populating
	gzip       bool     // let LIST responses be gzip-compressed
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
	var extra string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&cfg.server, "server", "bin/miniapiserver", "path of the miniapiserver binary to measure")
	fs.StringVar(&extra, "server-args", "", "extra flags for every server start, space separated (e.g. --feature-gates=APIListChunking=false)")
	fs.IntVar(&cfg.starts, "starts", 7, "start-to-ready samples per data dir")
	fs.IntVar(&cfg.lists, "lists", 10, "timed full listings per LIST variant (after one untimed warm-up)")
	fs.IntVar(&cfg.objects, "objects", 10000, "ConfigMaps (~1 KiB each) to create in the populated data dir")
	fs.IntVar(&cfg.page, "page", 500, "limit for paged LISTs")
	fs.IntVar(&cfg.workers, "workers", 16, "concurrent clients creating the ConfigMaps")
	fs.BoolVar(&cfg.gzip, "gzip", true, "accept gzip-compressed LIST responses, as client-go does by default")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.starts < 1 || cfg.lists < 1 || cfg.objects < 1 || cfg.page < 1 || cfg.workers < 1 {
		return config{}, errors.New("-starts, -lists, -objects, -page and -workers must be positive")
	}
	abs, err := filepath.Abs(cfg.server)
	if err != nil {
		return config{}, fmt.Errorf("resolving -server: %w", err)
	}
	cfg.server = abs
	cfg.serverArgs = strings.Fields(extra)
	return cfg, nil
}

// run performs every benchmark under one temporary root dir and writes the
// report to out.
func run(ctx context.Context, cfg config, out io.Writer) (err error) {
	began := time.Now()
	root, err := os.MkdirTemp("", "miniapiserver-bench-")
	if err != nil {
		return fmt.Errorf("creating temp dir: %w", err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(root)) }()

	var r report
	r.cfg = cfg
	if r.empty, err = benchEmptyStarts(ctx, cfg, root); err != nil {
		return err
	}
	populated := filepath.Join(root, "populated")
	if r.populate, err = populate(ctx, cfg, populated); err != nil {
		return err
	}
	if r.populated, err = measureStarts(ctx, cfg, "populated", func(int) string { return populated }, false); err != nil {
		return err
	}
	if r.lists, err = benchLists(ctx, cfg, populated); err != nil {
		return err
	}
	r.elapsed = time.Since(began)
	return r.write(out)
}
