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
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// startRun is one start-to-ready measurement.
type startRun struct {
	ready time.Duration // from exec to the ready line
	stop  time.Duration // from SIGTERM to exit
}

// startStats are the runs of one start-to-ready benchmark.
type startStats struct {
	runs    []startRun
	version string // from the ready line
}

func (st startStats) readyTimes() []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.ready
	}
	return times
}

func (st startStats) stopTimes() []time.Duration {
	times := make([]time.Duration, len(st.runs))
	for i, run := range st.runs {
		times[i] = run.stop
	}
	return times
}

// benchEmptyStarts measures start-to-ready, each time on a fresh data dir.
func benchEmptyStarts(ctx context.Context, cfg config, root string) (startStats, error) {
	dir := func(i int) string { return filepath.Join(root, fmt.Sprintf("empty-%d", i)) }
	return measureStarts(ctx, cfg, "empty", dir, true)
}

// measureStarts starts and stops the server cfg.starts times, run i on the
// data dir dataDir(i); with remove, it deletes the data dir after each run.
func measureStarts(ctx context.Context, cfg config, label string, dataDir func(int) string, remove bool) (startStats, error) {
	var st startStats
	for i := range cfg.starts {
		dir := dataDir(i)
		run, version, err := startStop(ctx, cfg, dir)
		if remove {
			err = errors.Join(err, os.RemoveAll(dir))
		}
		if err != nil {
			return startStats{}, fmt.Errorf("start-to-ready (%s data dir), run %d/%d: %w", label, i+1, cfg.starts, err)
		}
		progress("start-to-ready (%s data dir) %d/%d: ready in %s, stopped in %s",
			label, i+1, cfg.starts, fmtDuration(run.ready), fmtDuration(run.stop))
		st.runs = append(st.runs, run)
		st.version = version
	}
	return st, nil
}

// startStop starts the server on dataDir, then stops it.
func startStop(ctx context.Context, cfg config, dataDir string) (startRun, string, error) {
	s, err := startServer(ctx, cfg, dataDir)
	if err != nil {
		return startRun{}, "", err
	}
	if err := s.Stop(); err != nil {
		return startRun{}, "", err
	}
	return startRun{ready: s.ready, stop: s.stopped}, s.version(), nil
}

// progress prints a progress line to stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
