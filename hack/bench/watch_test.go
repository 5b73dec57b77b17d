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
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	fanoutWatchers  = flag.String("watchers", "100,1000", "comma-separated watcher counts of BenchmarkWatchFanout")
	etcdWatchersMax = flag.Int("etcd-watchers-max", 1000, "largest watcher count BenchmarkWatchFanout also runs with cache=off (0: none)")
	watchersPerConn = flag.Int("watchers-per-conn", 100, "watch streams per HTTP/2 connection in BenchmarkWatchFanout and BenchmarkStop")
	fanoutEvents    = flag.Int("events", 1000, "ConfigMap updates per BenchmarkWatchFanout op")
	eventInterval   = flag.Duration("event-interval", 0, "pause between the starts of two updates in BenchmarkWatchFanout (0: back to back)")
)

// deliveryTimeout is how long after the last update of an op every watcher
// may take to have every event.
const deliveryTimeout = time.Minute

// BenchmarkWatchFanout: for each -watchers count N, N JSON watches of the
// ConfigMaps of one namespace, -watchers-per-conn streams per HTTP/2
// connection, on a server of its own with a fresh data dir, while one
// writer updates one ConfigMap -events times, each update starting
// -event-interval after the previous one (an op). Every watcher must get
// every update, in order. ns/op is from an op's first update until every
// watcher has its last; p50-ns, p99-ns and max-ns are the latencies from
// each update's start to each watcher's receipt of it;
// server-cpu-ns/delivery and server-B/delivery are the server's CPU time
// (Linux only) and bytes allocated (kube-apiserver's plus its etcd's) per
// delivery of one update to one watcher, server-B/event per update;
// writes/s are the updates over the time until the last one's response.
// cache=off (--watch-cache=false) runs up to -etcd-watchers-max watchers.
func BenchmarkWatchFanout(b *testing.B) {
	for _, field := range strings.Split(*fanoutWatchers, ",") {
		n, err := strconv.Atoi(field)
		if err != nil || n < 1 {
			b.Fatalf("-watchers %s: want positive counts", *fanoutWatchers)
		}
		for _, cache := range []string{"on", "off"} {
			if cache == "off" && n > *etcdWatchersMax {
				continue
			}
			b.Run(fmt.Sprintf("watchers=%d/cache=%s", n, cache), func(b *testing.B) {
				onEach(b, func(b *testing.B, kind driver.Kind) { benchFanout(b, kind, n, cache) })
			})
		}
	}
}

// arrival is a watcher's receipt of the update with data.seq seq.
type arrival struct {
	seq int
	at  time.Time
}

func benchFanout(b *testing.B, kind driver.Kind, n int, cache string) {
	s := start(b, kind, env.Dir(fmt.Sprintf("watch-%s-%d-%s", kind, n, cache)), "--watch-cache="+strconv.FormatBool(cache == "on"))
	cms := s.Client().CoreV1().ConfigMaps(driver.Namespace)
	cm, err := cms.Create(b.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-watch"}, Data: map[string]string{"seq": "created"},
	}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var ws []*watcher[arrival]
	var client *kubernetes.Clientset
	for i := range n {
		if i%*watchersPerConn == 0 {
			client = watchClient(b, s)
		}
		ws = append(ws, newWatcher(b, client.CoreV1().RESTClient(), cm.ResourceVersion, *fanoutEvents, nil, func(line []byte, at time.Time) (arrival, bool) {
			seq, err := strconv.Atoi(jsonString(line, "seq")) // not the creation's "created"
			return arrival{seq, at}, err == nil
		}))
	}
	next := 0 // the seq of the next update
	var writing time.Duration
	// round makes k updates, seq next to next+k-1, and returns the latency
	// of every watcher's receipt of each, having checked that each got
	// them all, in order.
	round := func(k int) []time.Duration {
		sent := make([]time.Time, k)
		began := time.Now()
		for j := range sent {
			time.Sleep(time.Until(began.Add(time.Duration(j) * *eventInterval)))
			sent[j] = time.Now()
			cm.Data["seq"] = strconv.Itoa(next + j)
			if cm, err = cms.Update(b.Context(), cm, metav1.UpdateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		writing += time.Since(began)
		timeout := time.After(deliveryTimeout)
		latencies := make([]time.Duration, 0, k*n)
		for _, w := range ws {
			for j := range sent {
				a := receive(b, w, timeout)
				if a.seq != next+j {
					b.Fatalf("a watcher got update %d, want %d", a.seq, next+j)
				}
				latencies = append(latencies, a.at.Sub(sent[j]))
			}
		}
		next += k
		return latencies
	}
	heapAfterGC(b, s) // waits for the server's background start work: miniapiserver's OpenAPI v3 spec
	round(1)          // every watch is streaming
	writing = 0
	cpu, alloc := serverUsage(b, s)
	var latencies []time.Duration
	for b.Loop() {
		latencies = append(latencies, round(*fanoutEvents)...)
	}
	cpuAfter, allocAfter := serverUsage(b, s)
	slices.Sort(latencies)
	for _, p := range []struct {
		q    float64
		unit string
	}{{0.5, "p50-ns"}, {0.99, "p99-ns"}, {1, "max-ns"}} {
		b.ReportMetric(float64(latencies[max(int(math.Ceil(p.q*float64(len(latencies))))-1, 0)]), p.unit)
	}
	if cpu >= 0 {
		b.ReportMetric(float64(cpuAfter-cpu)/float64(len(latencies)), "server-cpu-ns/delivery")
	}
	b.ReportMetric((allocAfter-alloc)/float64(len(latencies)), "server-B/delivery")
	b.ReportMetric((allocAfter-alloc)/float64(b.N**fanoutEvents), "server-B/event")
	b.ReportMetric(float64(b.N**fanoutEvents)/writing.Seconds(), "writes/s")
}

// serverUsage is the CPU time s has used so far (-1 where the OS does not
// tell) and the bytes it has allocated.
func serverUsage(b *testing.B, s *driver.Server) (time.Duration, float64) {
	cpu, err := s.CPU()
	if errors.Is(err, errors.ErrUnsupported) {
		cpu = -1
	} else if err != nil {
		b.Fatal(err)
	}
	alloc, err := s.AllocBytes(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return cpu, alloc
}

func heapAfterGC(b *testing.B, s *driver.Server) float64 {
	heap, err := s.HeapAfterGC(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return heap
}

// watchClient is an admin clientset on a connection of its own, without a
// request timeout, closed when b ends.
func watchClient(b *testing.B, s *driver.Server) *kubernetes.Clientset {
	client, hc, err := s.OwnClient()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { driver.CloseIdle(hc) })
	return client
}

// watcher is one JSON watch of the ConfigMaps in driver.Namespace, read by
// a goroutine of its own that sends on c what its handler makes of the
// events, and closes c, err set, when the stream ends.
type watcher[T any] struct {
	c   chan T
	err error
}

// newWatcher opens a watcher on rc from rv that streams until b ends; c
// buffers buffer values. handle gets each event line with its arrival
// time, and says whether to send v. resumed is as for readWatch.
func newWatcher[T any](b *testing.B, rc rest.Interface, rv string, buffer int, resumed *atomic.Int64, handle func(line []byte, at time.Time) (v T, send bool)) *watcher[T] {
	ctx := b.Context()
	body, err := openWatch(ctx, rc, rv)
	if err != nil {
		b.Fatal(err)
	}
	w := &watcher[T]{c: make(chan T, buffer)}
	b.Cleanup(func() { // before the connection's and the server's: the stream has ended
		for range w.c {
		}
	})
	go func() {
		defer close(w.c)
		w.err = readWatch(ctx, rc, body, rv, resumed, func(line []byte, at time.Time) {
			if v, ok := handle(line, at); ok {
				select {
				case w.c <- v:
				case <-ctx.Done():
				}
			}
		})
	}()
	return w
}

// receive is w's next value; b fails if w's stream has ended or timeout
// fires first.
func receive[T any](b *testing.B, w *watcher[T], timeout <-chan time.Time) T {
	select {
	case v, ok := <-w.c:
		if ok {
			return v
		}
		b.Fatalf("a watch ended: %v", w.err)
	case <-timeout:
		b.Fatalf("a watcher lacks events %s after the last update", deliveryTimeout)
	}
	panic("unreachable")
}

// openWatch starts a JSON watch of the ConfigMaps in driver.Namespace from
// resourceVersion rv; it returns once the server has answered.
func openWatch(ctx context.Context, rc rest.Interface, rv string) (io.ReadCloser, error) {
	return rc.Get().AbsPath(driver.ConfigMapsPath).Param("watch", "true").Param("resourceVersion", rv).
		SetHeader("Accept", driver.AcceptJSON).Stream(ctx)
}

// readWatch reads body, a watch that openWatch opened on rc from rv,
// calling event with each event line and its arrival time, until ctx is
// done; an ERROR event ends it with an error. When the server ends the
// stream, it watches again from the last event's resourceVersion, as
// client-go's reflector does, and counts that in resumed; with resumed
// nil, the end is an error.
func readWatch(ctx context.Context, rc rest.Interface, body io.ReadCloser, rv string, resumed *atomic.Int64, event func(line []byte, at time.Time)) error {
	defer func() { body.Close() }()
	for {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 4<<10), 1<<20)
		for sc.Scan() {
			at := time.Now()
			if bytes.HasPrefix(sc.Bytes(), []byte(`{"type":"ERROR"`)) {
				return fmt.Errorf("ERROR event: %.300s", sc.Bytes())
			}
			rv = cmp.Or(jsonString(sc.Bytes(), "resourceVersion"), rv)
			event(sc.Bytes(), at)
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case sc.Err() != nil:
			return fmt.Errorf("reading the watch stream: %w", sc.Err())
		case resumed == nil:
			return errors.New("the server ended the watch stream")
		}
		resumed.Add(1)
		body.Close()
		var err error
		if body, err = openWatch(ctx, rc, rv); err != nil {
			return fmt.Errorf("watching again from resourceVersion %s: %w", rv, err)
		}
	}
}

// jsonString is the value of the first "key":"value" in a JSON line: a
// ConfigMap's only resourceVersion is its metadata's, and its data key seq
// is unique.
func jsonString(line []byte, key string) string {
	_, rest, _ := bytes.Cut(line, []byte(`"`+key+`":"`))
	value, _, _ := bytes.Cut(rest, []byte(`"`))
	return string(value)
}
