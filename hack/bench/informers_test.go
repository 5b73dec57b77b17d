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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	informerCount = flag.Int("informers", 16, "concurrent Secret informers in InformerSync, each with its own connection")
	secrets       = flag.Int("secrets", 100, "Secrets the informers sync")
	secretSize    = flag.Int("secret-size", 1<<20, "bytes of (random) data per Secret")
	heapSample    = flag.Duration("heap-sample", 20*time.Millisecond, "how often InformerSync samples the server's heap")
	plots         = flag.String("plots", "", "directory to write plots to (\"\": none): bench-informers-heap.svg")
)

const (
	syncTimeout  = 5 * time.Minute  // for every informer of an op to sync
	drainTimeout = 30 * time.Second // for the server to end an op's watches
	samplerRuns  = 20               // heap samples samplerCost takes
)

// BenchmarkInformerSync starts -informers Secret informers at once, each on
// a connection of its own, on -secrets Secrets of -secret-size random
// bytes, with watch-list (client-go's WatchListClient gate on) and with
// LIST+WATCH (the gate off, in this process; the servers run their
// defaults for both). The modes take turns on one server of each kind.
// ns/op is from their start until all have synced. peak-heap-B is the
// largest heap in use (kube-apiserver's plus its etcd's) sampled every
// -heap-sample meanwhile, less heap-B, the heap after a forced GC just
// before, and less sampler-B, what the sampler's own /metrics scrapes had
// left on it then (sample-B each, measured alone on the idle server);
// raw-peak-heap-B is the growth with them. server-cpu-ns/op and
// client-cpu-ns/op are the CPU time the server and the benchmark's
// informers used until they synced. lists and watches are the
// Secret requests in the namespace the server answered; samples the heap
// samples taken. With -plots, the last op's samples of each mode and
// server go to bench-informers-heap.svg.
func BenchmarkInformerSync(b *testing.B) {
	servers := startEach(b, func(kind driver.Kind) string { return secretsFixture(b, kind) })
	perSample := map[driver.Kind]float64{}
	for kind, s := range servers {
		opts := metav1.ListOptions{ResourceVersion: "0", Limit: 1} // warms the server up
		if _, err := s.Client().CoreV1().Secrets(driver.Namespace).List(b.Context(), opts); err != nil {
			b.Fatal(err)
		}
		perSample[kind] = samplerCost(b, s)
	}
	gate := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	b.Cleanup(func() { setWatchListClient(b, gate) })
	lines := map[string]plotter.XYs{} // by "kind, mode"
	for _, mode := range []string{"watch-list", "list"} {
		b.Run("mode="+mode, func(b *testing.B) {
			setWatchListClient(b, mode == "watch-list")
			onEach(b, func(b *testing.B, kind driver.Kind) {
				totals := map[string]float64{"sample-B": perSample[kind] * float64(b.N)}
				var series []driver.HeapPoint
				for b.Loop() {
					series = syncInformers(b, servers[kind], perSample[kind], totals)
				}
				reportMeans(b, totals)
				lists := totals["lists"] / float64(b.N)
				if mode == "watch-list" && lists > 0 || mode == "list" && lists < float64(*informerCount) {
					b.Errorf("%s: %.0f Secret LISTs per op: the informers did not run as named", mode, lists)
				}
				xys := make(plotter.XYs, len(series))
				for i, p := range series {
					xys[i] = plotter.XY{X: p.At.Seconds(), Y: p.Bytes / (1 << 20)}
				}
				lines[fmt.Sprintf("%s, %s", kind, mode)] = xys
			})
		})
	}
	writeHeapPlot(b, lines)
}

// syncInformers is one op of BenchmarkInformerSync on s, which it adds to
// totals; it returns the heap samples.
func syncInformers(b *testing.B, s *driver.Server, perSample float64, totals map[string]float64) []driver.HeapPoint {
	ctx := b.Context()
	settle(b) // after the op before, as before the first
	before, err := s.Scrape(ctx, driver.RequestTotal)
	if err != nil {
		b.Fatal(err)
	}
	baseline, err := s.HeapAfterGC(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	sampler := s.SampleHeap(sampling, *heapSample)
	serverCPU, clientCPU := cpuTimes(b, s)
	began := time.Now()

	rc := s.RESTConfig()
	rc.Timeout = 0 // the watches stream as long as the op takes
	rc.ContentType, rc.AcceptContentTypes = driver.AcceptProtobuf, driver.AcceptProtobuf+","+driver.AcceptJSON
	running, stopInformers := context.WithCancel(klog.NewContext(ctx, logr.Discard())) // no logs of the watches the op's end ends
	var informers []cache.SharedIndexInformer
	var synced []cache.DoneChecker
	var wg sync.WaitGroup
	stop := sync.OnceFunc(func() { stopInformers(); wg.Wait() })
	defer stop()
	for range *informerCount {
		client, hc, err := driver.OwnClient(rc)
		if err != nil {
			b.Fatal(err)
		}
		defer driver.CloseIdle(hc)
		informer := coreinformers.NewSecretInformer(client, driver.Namespace, 0, nil)
		if err := informer.SetTransform(dropSecretData); err != nil {
			b.Fatal(err)
		}
		informers, synced = append(informers, informer), append(synced, informer.HasSyncedChecker())
	}
	for _, informer := range informers {
		wg.Go(func() { informer.RunWithContext(running) })
	}
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cache.WaitFor(syncCtx, "", synced...) {
		b.Fatalf("the informers did not sync within %s", syncTimeout)
	}
	took := time.Since(began)
	serverCPU2, clientCPU2 := cpuTimes(b, s)
	totals["server-cpu-ns/op"] += float64(serverCPU2 - serverCPU)
	totals["client-cpu-ns/op"] += float64(clientCPU2 - clientCPU)
	stopSampling()
	series, err := sampler.Wait()
	if err != nil {
		b.Fatal(err)
	}
	for i, informer := range informers {
		if n := len(informer.GetStore().ListKeys()); n != *secrets {
			b.Fatalf("informer %d holds %d Secrets, want %d", i, n, *secrets)
		}
	}
	// A LIST informer has synced before it sends its WATCH: let every one
	// open it (or drainTimeout pass: the count shows it), so that the ops'
	// watches compare; then the server counts them when they end.
	secretWatchesUntil(b, s, func(open float64) bool { return open >= float64(*informerCount) })
	stop()
	if open := secretWatchesUntil(b, s, func(open float64) bool { return open == 0 }); open > 0 {
		b.Fatalf("the server still serves %.0f Secret watches %s after the informers stopped", open, drainTimeout)
	}
	after, err := s.Scrape(ctx, driver.RequestTotal)
	if err != nil {
		b.Fatal(err)
	}

	peak, netPeak, sampled := netOfSampler(series, baseline, perSample)
	totals["ns/op"] += float64(took)
	totals["peak-heap-B"] += netPeak - baseline
	totals["raw-peak-heap-B"] += peak - baseline
	totals["sampler-B"] += sampled
	totals["heap-B"] += baseline
	totals["samples"] += float64(len(series))
	for _, verb := range []string{"LIST", "WATCH"} {
		labels := []string{`resource="secrets"`, `scope="namespace"`, `verb="` + verb + `"`}
		n0, err0 := before.Sum(driver.RequestTotal, labels...)
		n1, err1 := after.Sum(driver.RequestTotal, labels...)
		if err := errors.Join(err0, err1); err != nil {
			b.Fatal(err)
		}
		totals[map[string]string{"LIST": "lists", "WATCH": "watches"}[verb]] += n1 - n0
	}
	return series
}

// cpuTimes are the CPU times s's processes and the benchmark's own have
// used so far.
func cpuTimes(b *testing.B, s *driver.Server) (server, client time.Duration) {
	server, err := s.CPU()
	if err != nil {
		b.Fatal(err)
	}
	if client, err = driver.ClientCPU(); err != nil {
		b.Fatal(err)
	}
	return server, client
}

// dropSecretData keeps the bench's own memory small: the informers hold
// names and metadata only (the server sends the data all the same).
func dropSecretData(obj any) (any, error) {
	if secret, ok := obj.(*corev1.Secret); ok {
		secret.Data = nil
	}
	return obj, nil
}

// netOfSampler is the largest heap of series, and the largest less what
// the sampler's own scrapes had left on the heap (sampler: perSample per
// scrape since the last drop in the series, a GC, or since the baseline,
// itself after a GC), no less than the baseline.
func netOfSampler(series []driver.HeapPoint, baseline, perSample float64) (peak, netPeak, sampler float64) {
	since := 0
	for i, p := range series {
		if i > 0 && p.Bytes < series[i-1].Bytes {
			since = 0
		}
		since++
		peak = max(peak, p.Bytes)
		if s := float64(since) * perSample; i == 0 || p.Bytes-s > netPeak {
			netPeak, sampler = p.Bytes-s, s
		}
	}
	return peak, max(netPeak, baseline), sampler
}

// samplerCost is what one heap sample's scrapes allocate on s: the mean
// growth between samplerRuns samples back to back on the idle server
// after a forced GC, but over a GC (in kube-apiserver's etcd, whose small
// heap collects often). A /metrics scrape allocates about a MiB in either
// server, which would otherwise count as the informers'.
func samplerCost(b *testing.B, s *driver.Server) float64 {
	if _, err := s.HeapAfterGC(b.Context()); err != nil {
		b.Fatal(err)
	}
	var grown, last float64
	growths := 0
	for i := range samplerRuns {
		heap, err := s.HeapInuse(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 && heap >= last {
			grown, growths = grown+heap-last, growths+1
		}
		last = heap
	}
	if growths == 0 {
		b.Fatal("measuring the heap sampler: the heap shrank at every sample")
	}
	return grown / float64(growths)
}

// secretWatchesUntil polls the Secret watches in the namespace that s
// serves until done says so or drainTimeout has passed, and returns the
// last count. (kube-apiserver's own informer watches Secrets in every
// namespace: scope="cluster".)
func secretWatchesUntil(b *testing.B, s *driver.Server, done func(open float64) bool) float64 {
	for deadline := time.Now().Add(drainTimeout); ; time.Sleep(20 * time.Millisecond) {
		m, err := s.Scrape(b.Context(), driver.LongRunning)
		if err != nil {
			b.Fatal(err)
		}
		open, err := m.Sum(driver.LongRunning, `resource="secrets"`, `scope="namespace"`, `verb="WATCH"`)
		if err != nil {
			b.Fatal(err)
		}
		if done(open) || time.Now().After(deadline) {
			return open
		}
	}
}

// setWatchListClient sets client-go's WatchListClient gate for this
// process (KUBE_FEATURE_WatchListClient would set it once for all).
// Reflectors read it when they are created.
func setWatchListClient(b testing.TB, on bool) {
	gates, ok := clientfeatures.FeatureGates().(interface {
		Set(clientfeatures.Feature, bool) error
	})
	if !ok {
		b.Fatalf("client-go's feature gates (%T) cannot be set in-process", clientfeatures.FeatureGates())
	}
	if err := gates.Set(clientfeatures.WatchListClient, on); err != nil {
		b.Fatal(err)
	}
}

// secretsFixture is the data dir of kind holding the -secrets Secrets.
func secretsFixture(b *testing.B, kind driver.Kind) string {
	return fixture(b, kind, fmt.Sprintf("secrets-%d-%d", *secrets, *secretSize), nil, func(ctx context.Context, s *driver.Server) error {
		return driver.ForEach(ctx, *secrets, 4, func(ctx context.Context, i int) error {
			data := make([]byte, *secretSize)
			_, _ = rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), byte(i >> 16)}).Read(data)
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-secret-%04d", i)},
				Data:       map[string][]byte{"payload": data},
			}
			_, err := s.Client().CoreV1().Secrets(driver.Namespace).Create(ctx, secret, metav1.CreateOptions{})
			return err
		})
	})
}

// heapPlotData, under -plots, keeps the lines of writeHeapPlot.
const heapPlotData = "bench-informers-heap.json"

// writeHeapPlot draws lines to -plots/bench-informers-heap.svg, with the
// lines of the kinds other processes of the run measured (hack/bench/rounds.sh
// runs each kind in its own): they are kept, by label, in
// -plots/bench-informers-heap.json.
func writeHeapPlot(b *testing.B, lines map[string]plotter.XYs) {
	if *plots == "" || len(lines) == 0 {
		return
	}
	data := filepath.Join(*plots, heapPlotData)
	all := map[string]plotter.XYs{}
	if old, err := os.ReadFile(data); err == nil {
		if err := json.Unmarshal(old, &all); err != nil {
			b.Fatalf("%s: %v", data, err)
		}
	}
	maps.Copy(all, lines)
	var labelled []any // a label, then its samples, for plotutil.AddLines
	for _, label := range slices.Sorted(maps.Keys(all)) {
		labelled = append(labelled, label, all[label])
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Server heap in use while %d informers sync %d × %d KiB Secrets (last op)", *informerCount, *secrets, *secretSize>>10)
	p.X.Label.Text, p.Y.Label.Text = "s since the informers started", "heap in use (MiB)"
	p.X.Min, p.Y.Min = 0, 0 // the legend goes below the lines
	err := plotutil.AddLines(p, labelled...)
	if err == nil {
		err = os.MkdirAll(*plots, 0o755)
	}
	var encoded []byte
	if err == nil {
		encoded, err = json.Marshal(all)
	}
	if err == nil {
		err = os.WriteFile(data, encoded, 0o644)
	}
	if err == nil {
		err = p.Save(8*vg.Inch, 4.5*vg.Inch, filepath.Join(*plots, "bench-informers-heap.svg"))
	}
	if err != nil {
		b.Fatal(err)
	}
}
