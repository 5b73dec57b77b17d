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

package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	serverBin    = flag.String("server", "../../bin/miniapiserver", "the miniapiserver binary to measure")
	serverArgs   = flag.String("server-args", "", "extra flags for every miniapiserver start, space separated")
	upstreamDir  = flag.String("upstream", "", "directory of kube-apiserver and etcd (hack/upstream/build.sh): run every benchmark on them too")
	upstreamArgs = flag.String("upstream-args", "", "extra kube-apiserver flags, space separated")
	fixtures     = flag.String("fixtures", "", "directory to keep populated data dirs in across runs (\"\": a temporary one); make bench empties it first")
	objects      = flag.Int("objects", 10000, "ConfigMaps (~1 KiB each) in the populated data dirs")
	round        = flag.Int("round", 1, "which round of hack/bench/rounds.sh this run is")
	onlyKind     = flag.String("kind", "", "run on this server kind only, mini or upstream (\"\": on each the env has); hack/bench/rounds.sh runs each kind in processes of its own")
	slowRounds   = flag.Int("slow-upstream-rounds", 3, "rounds in which the benchmarks that wait out kube-apiserver's minute-long stop with watches open run on it")
	prepare      = flag.String("prepare", "", "for BenchmarkFixtures: populate the data dirs of the benchmarks this -test.bench pattern runs")
)

// workers is how many clients populate a data dir at once.
const workers = 16

// env starts the servers; nil unless benchmarks run.
var env *driver.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run()) // unit tests only: no servers
	}
	var err error
	env, err = driver.NewEnv(context.Background(), *serverBin, strings.Fields(*serverArgs), *upstreamDir, strings.Fields(*upstreamArgs))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if *onlyKind != "" && !slices.Contains(env.Kinds(), driver.Kind(*onlyKind)) {
		fmt.Fprintf(os.Stderr, "bench: -kind %q: not one of %v\n", *onlyKind, env.Kinds())
		os.Exit(2)
	}
	for _, kind := range env.Kinds() {
		fmt.Printf("%s: %s\n", kind, env.Version[kind])
	}
	code := m.Run()
	if err := env.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.Exit(code)
}

// kinds are the server kinds the benchmarks run on: the env's, or -kind's
// alone (rounds.sh runs each kind in processes of its own, and alternates
// which goes first).
func kinds() []driver.Kind {
	ks := env.Kinds()
	if *onlyKind != "" {
		ks = slices.DeleteFunc(ks, func(k driver.Kind) bool { return string(k) != *onlyKind })
	}
	return ks
}

// onEach runs f as the sub-benchmark server=KIND of each of kinds, each
// from the same state: the servers running idle, and this process's heap
// collected and returned to the OS.
func onEach(b *testing.B, f func(b *testing.B, kind driver.Kind)) {
	for _, kind := range kinds() {
		b.Run("server="+string(kind), func(b *testing.B) {
			settle(b)
			f(b, kind)
		})
	}
}

// settle waits until the servers running are idle, then collects this
// process's garbage and returns its free memory to the OS. Without it, an
// op pays for what the op before it, on the other server, left: a server
// busy with its own leftovers, or, after one that received gigabytes,
// this process's clients reading into memory the OS has to fault in
// again, or not.
func settle(b *testing.B) {
	if err := env.WaitIdle(b.Context()); err != nil {
		b.Logf("timing anyway: %v", err)
	}
	debug.FreeOSMemory()
}

// skipSlowUpstream skips b on kube-apiserver after -slow-upstream-rounds
// rounds: its stop with watches open takes a minute (its HTTP server waits
// for them), the same each time.
func skipSlowUpstream(b *testing.B, kind driver.Kind) {
	if kind == driver.Upstream && *round > *slowRounds {
		b.Skipf("round %d: kube-apiserver's stop with watches open runs in the first %d rounds only", *round, *slowRounds)
	}
}

// start starts a server of kind on dataDir and stops it when b ends.
func start(b testing.TB, kind driver.Kind, dataDir string, args ...string) *driver.Server {
	b.Helper()
	s, err := env.Start(b.Context(), kind, dataDir, args...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Stop(); err != nil {
			b.Error(err)
		}
	})
	return s
}

// startEach starts a server of each kind on the data dir dir(kind) with
// args, stopped when b ends.
func startEach(b *testing.B, dir func(driver.Kind) string, args ...string) map[driver.Kind]*driver.Server {
	servers := map[driver.Kind]*driver.Server{}
	for _, kind := range kinds() {
		servers[kind] = start(b, kind, dir(kind), args...)
	}
	return servers
}

// fixture is a data dir of kind named name that fill has populated on a
// server started with args, made once: kept under -fixtures across runs
// (a marker file says it is complete), or in the env's root for this run.
func fixture(b *testing.B, kind driver.Kind, name string, args []string, fill func(ctx context.Context, s *driver.Server) error) string {
	b.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	dir := env.Dir(filepath.Join("fixtures", string(kind), name))
	if *fixtures != "" {
		dir = filepath.Join(*fixtures, string(kind), name)
	}
	complete := filepath.Join(dir, ".complete")
	if _, err := os.Stat(complete); err == nil {
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	s, err := env.Start(b.Context(), kind, dir, args...)
	if err != nil {
		b.Fatal(err)
	}
	err = fill(b.Context(), s)
	if err := errors.Join(err, s.Stop()); err != nil {
		b.Fatalf("populating %s: %v", dir, err)
	}
	if err := os.WriteFile(complete, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("populated %s in %s", dir, time.Since(began).Round(time.Millisecond))
	return dir
}

var fixtureMu sync.Mutex

// BenchmarkFixtures, with -prepare PATTERN, populates under -fixtures the
// data dirs that the benchmarks -test.bench PATTERN runs read, on each of
// kinds, starts the -plots afresh, and measures nothing; without it, it is
// skipped. hack/bench/rounds.sh runs it before its first round: when that
// round populated them itself, its servers ran while the machine was still
// busy with the writes, and it measured slower than the others.
func BenchmarkFixtures(b *testing.B) {
	if *prepare == "" {
		b.Skip("populates the data dirs with -prepare only")
	}
	top, _, _ := strings.Cut(*prepare, "/")
	match, err := regexp.Compile(top)
	if err != nil {
		b.Fatalf("-prepare: %v", err)
	}
	if *plots != "" {
		if err := os.Remove(filepath.Join(*plots, heapPlotData)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.Fatal(err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fixturesOf)) {
		if match.MatchString(name) {
			for _, kind := range kinds() {
				fixturesOf[name](b, kind)
			}
		}
	}
}

// fixturesOf populates, by benchmark, the data dirs it reads on kind. A
// benchmark missing here populates them in the first round.
var fixturesOf = map[string]func(b *testing.B, kind driver.Kind){
	"BenchmarkList":                func(b *testing.B, kind driver.Kind) { configMaps(b, kind) },
	"BenchmarkListCustomResources": func(b *testing.B, kind driver.Kind) { crdFixture(b, kind, *crs) },
	"BenchmarkPaginate":            func(b *testing.B, kind driver.Kind) { pagingConfigMaps(b, kind) },
	"BenchmarkInformerSync":        func(b *testing.B, kind driver.Kind) { secretsFixture(b, kind) },
	"BenchmarkStartToReady": func(b *testing.B, kind driver.Kind) {
		if kind == driver.Mini {
			configMaps(b, kind) // data=populated
		} else {
			crdFixture(b, kind, 0) // data=crds
		}
	},
}

// configMaps is the data dir of kind holding -objects ConfigMaps.
func configMaps(b *testing.B, kind driver.Kind) string {
	return fixture(b, kind, fmt.Sprintf("configmaps-%d", *objects), nil, func(ctx context.Context, s *driver.Server) error {
		return driver.CreateConfigMaps(ctx, s.Client(), *objects, workers)
	})
}

// reportMeans reports each of totals over b.N.
func reportMeans(b *testing.B, totals map[string]float64) {
	for unit, total := range totals {
		b.ReportMetric(total/float64(b.N), unit)
	}
}
