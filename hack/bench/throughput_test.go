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
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	throughputWriters  = flag.Int("throughput-writers", 16, "concurrent clients updating ConfigMaps in BenchmarkThroughput")
	throughputWatchers = flag.Int("throughput-watchers", 10, "ConfigMap watches that must each get every event in BenchmarkThroughput")
	throughputUpdates  = flag.Int("throughput-updates", 5000, "ConfigMap updates per BenchmarkThroughput op")
)

// BenchmarkThroughput is the events/s one resource sustains:
// -throughput-writers clients merge-patch as many ConfigMaps as fast as
// they can, -throughput-updates patches in all (an op), while
// -throughput-watchers JSON watches of them must each get every event; all
// over one connection, on a server of its own with a fresh data dir.
// ns/op is from an op's first update until every watcher has every event;
// events/s are the events all watchers got over that time, writes/s the
// updates over the time until the last one's response;
// resumed-watches/op the streams the server ended early, which the
// watchers opened again from the last event's resourceVersion
// (kube-apiserver ends a watcher that falls behind).
func BenchmarkThroughput(b *testing.B) {
	for _, cache := range []string{"on", "off"} {
		b.Run("cache="+cache, func(b *testing.B) {
			onEach(b, func(b *testing.B, kind driver.Kind) { benchThroughput(b, kind, cache) })
		})
	}
}

func benchThroughput(b *testing.B, kind driver.Kind, cache string) {
	s := start(b, kind, env.Dir(fmt.Sprintf("throughput-%s-%s", kind, cache)), "--watch-cache="+strconv.FormatBool(cache == "on"))
	heapAfterGC(b, s) // waits for the server's background start work: miniapiserver's OpenAPI v3 spec
	client := watchClient(b, s)
	for i := range *throughputWriters {
		if err := driver.CreateConfigMap(b.Context(), client, i); err != nil {
			b.Fatal(err)
		}
	}
	list, err := client.CoreV1().ConfigMaps(driver.Namespace).List(b.Context(), metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	var resumed atomic.Int64
	var ws []*watcher[time.Time]
	for range *throughputWatchers {
		got := 0 // MODIFIED events
		// Each watcher sends when it has had every event of an op.
		ws = append(ws, newWatcher(b, client.CoreV1().RESTClient(), list.ResourceVersion, 1, &resumed, func(line []byte, at time.Time) (time.Time, bool) {
			modified := bytes.HasPrefix(line, []byte(`{"type":"MODIFIED"`))
			if modified {
				got++
			}
			return at, modified && got%*throughputUpdates == 0
		}))
	}
	updates := 0 // so far
	var writing, delivering time.Duration
	for b.Loop() {
		began := time.Now()
		err := driver.ForEach(b.Context(), *throughputUpdates, *throughputWriters, func(ctx context.Context, i int) error {
			// Each value is new, so every patch is a write; two writers may
			// patch one ConfigMap at once, which the server retries.
			return driver.TouchConfigMap(ctx, client, i%*throughputWriters, "tp-"+strconv.Itoa(updates+i))
		})
		if err != nil {
			b.Fatal(err)
		}
		writing += time.Since(began)
		updates += *throughputUpdates
		timeout := time.After(deliveryTimeout)
		var last time.Time
		for _, w := range ws {
			if at := receive(b, w, timeout); at.After(last) {
				last = at
			}
		}
		delivering += last.Sub(began)
	}
	b.ReportMetric(float64(updates)/writing.Seconds(), "writes/s")
	b.ReportMetric(float64(updates**throughputWatchers)/delivering.Seconds(), "events/s")
	b.ReportMetric(float64(resumed.Load())/float64(b.N), "resumed-watches/op")
}

// BenchmarkHeapPerObject is the server's heap in use after forced GCs
// (kube-apiserver's plus its etcd's) on a data dir of -objects ConfigMaps,
// minus its heap on an empty one (empty-heap-B), per ConfigMap: right after
// a start on them (start-B/object), and after one JSON and one protobuf
// LIST of them all, each in one request (listed-B/object). An op is one
// such start, its LISTs, heap readings and stop.
func BenchmarkHeapPerObject(b *testing.B) {
	onEach(b, func(b *testing.B, kind driver.Kind) {
		s := start(b, kind, env.Dir("heap-empty-"+string(kind)))
		empty := heapAfterGC(b, s)
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		dir := configMaps(b, kind)
		var started, listed float64
		for b.Loop() {
			s := start(b, kind, dir)
			started += heapAfterGC(b, s)
			for _, accept := range []string{driver.AcceptJSON, driver.AcceptProtobuf} {
				v := driver.ListVariant{Accept: accept}
				if _, err := driver.VerifiedListing(b.Context(), s.Client().CoreV1().RESTClient(), v, *objects); err != nil {
					b.Fatal(err)
				}
			}
			listed += heapAfterGC(b, s)
			if err := s.Stop(); err != nil {
				b.Fatal(err)
			}
		}
		perObject := func(heap float64) float64 { return (heap/float64(b.N) - empty) / float64(*objects) }
		b.ReportMetric(perObject(started), "start-B/object")
		b.ReportMetric(perObject(listed), "listed-B/object")
		b.ReportMetric(empty, "empty-heap-B")
	})
}

// TestReadWatch checks that readWatch watches again from the last event's
// resourceVersion when the server ends a stream (or fails without
// resumed), and that an ERROR event ends it.
func TestReadWatch(t *testing.T) {
	var mu sync.Mutex
	var watched []string // the resourceVersion of each watch request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rv := r.URL.Query().Get("resourceVersion")
		mu.Lock()
		watched = append(watched, rv)
		mu.Unlock()
		if rv == "error" {
			fmt.Fprintln(w, `{"type":"ERROR","object":{"kind":"Status","code":410}}`)
			return
		}
		from, _ := strconv.Atoi(rv)
		for n := from + 1; n <= from+3; n++ { // three events, then the end
			fmt.Fprintf(w, `{"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"bench-00000","resourceVersion":"%d"}}}`+"\n", n)
		}
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	rc := client.CoreV1().RESTClient()
	run := func(rv string, resumed *atomic.Int64, stopAfter int) (got []string, err error) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		body, err := openWatch(ctx, rc, rv)
		if err != nil {
			t.Fatal(err)
		}
		err = readWatch(ctx, rc, body, rv, resumed, func(line []byte, _ time.Time) {
			if got = append(got, jsonString(line, "resourceVersion")); len(got) == stopAfter {
				cancel()
			}
		})
		return got, err
	}
	var resumed atomic.Int64
	got, err := run("10", &resumed, 7)
	if !errors.Is(err, context.Canceled) || len(got) < 7 || strings.Join(got[:7], " ") != "11 12 13 14 15 16 17" {
		t.Errorf("got events %v, %v; want 11 to 17, then context.Canceled", got, err)
	}
	if _, err := run("error", &resumed, 0); err == nil || !strings.Contains(err.Error(), "ERROR event") {
		t.Errorf("got %v, want an ERROR event", err)
	}
	if _, err := run("20", nil, 0); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Errorf("without resumed, got %v; want the end as an error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(watched, []string{"10", "13", "16", "error", "20"}) || resumed.Load() != 2 {
		t.Errorf("watched from %v, %d resumed; want [10 13 16 error 20], 2", watched, resumed.Load())
	}
}
