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
	"flag"
	"fmt"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	pageObjects = flag.Int("pagination-configmaps", 50000, "ConfigMaps (~1 KiB each) that Paginate lists")
	pageLimit   = flag.Int("pagination-limit", 500, "limit of Paginate's paged LISTs")
	firstPages  = flag.Int("pagination-first-pages", 1000, "first pages per op of Paginate's first-pages=N")
	writeRate   = flag.Int("pagination-write-rate", 50, "ConfigMap updates a second during Paginate's first-pages=N")
)

// BenchmarkPaginate is KEP-4988 on -pagination-configmaps ConfigMaps,
// with the watch cache (cache=on) and without it (cache=off):
//
//   - format=F/limit=L: a full listing paged by -pagination-limit, or in
//     one request (limit=0, cache=on only); from the cache, the first page
//     is its latest state and the continuations come from its snapshots;
//   - format=protobuf/limit=0/rv=exact, and limit=L/rv=exact/first-pages=1:
//     the whole list, and its first page only, at a resourceVersion older
//     than driver.ExactRVWrites updates: a snapshot, or etcd's history;
//   - format=protobuf/limit=L/first-pages=N: -pagination-first-pages first
//     pages, never continued, while a writer updates -pagination-write-rate
//     ConfigMaps a second. ns/op is the N pages; heap-B the heap in use
//     after forced GCs before them, after the listings above (cache=on
//     minus cache=off: the watch cache's own size), heap-growth-B its
//     growth by after them; writes/op the updates meanwhile; snapshots
//     (miniapiserver only) the cache's ConfigMap snapshots after them.
//
// The listings report BenchmarkList's figures and, on miniapiserver,
// snapshot-lists/op: the requests of a listing that its cache served from
// snapshots.
func BenchmarkPaginate(b *testing.B) {
	exact := string(metav1.ResourceVersionMatchExact)
	variants := []driver.ListVariant{
		{Accept: driver.AcceptProtobuf, RV: "exact", Match: exact},
		{Accept: driver.AcceptProtobuf, Limit: *pageLimit, RV: "exact", Match: exact, FirstPage: true},
		{Accept: driver.AcceptJSON, Limit: *pageLimit},
		{Accept: driver.AcceptJSON},
		{Accept: driver.AcceptProtobuf, Limit: *pageLimit},
		{Accept: driver.AcceptProtobuf},
	}
	for _, cache := range []string{"on", "off"} {
		b.Run("cache="+cache, func(b *testing.B) {
			servers := startEach(b, func(kind driver.Kind) string { return pagingConfigMaps(b, kind) }, "--watch-cache="+strconv.FormatBool(cache == "on"))
			exactRV := map[driver.Kind]string{}
			for kind, s := range servers {
				rv, err := driver.RVBeforeWrites(b.Context(), s.Client(), *pageObjects)
				if err != nil {
					b.Fatal(err)
				}
				exactRV[kind] = rv
			}
			for _, v := range variants {
				if cache == "off" && v.Limit == 0 && v.Match == "" {
					continue // BenchmarkList's
				}
				b.Run(pagingName(v, 1), func(b *testing.B) {
					onEach(b, func(b *testing.B, kind driver.Kind) {
						if v.Match != "" {
							v.RV = exactRV[kind]
						}
						benchPaging(b, servers[kind], v)
					})
				})
			}
			first := driver.ListVariant{Accept: driver.AcceptProtobuf, Limit: *pageLimit, FirstPage: true}
			b.Run(pagingName(first, *firstPages), func(b *testing.B) {
				onEach(b, func(b *testing.B, kind driver.Kind) { benchFirstPages(b, servers[kind], first) })
			})
		})
	}
}

// pagingName is v's part of a BenchmarkPaginate name: format, limit, rv
// only if exact, and first-pages=pages if v lists first pages only.
func pagingName(v driver.ListVariant, pages int) string {
	name := fmt.Sprintf("format=%s/limit=%d", v.Format(), v.Limit)
	if v.Match != "" {
		name += "/rv=exact"
	}
	if v.FirstPage {
		name += "/first-pages=" + strconv.Itoa(pages)
	}
	return name
}

// pagingConfigMaps is the data dir of kind holding -pagination-configmaps
// ConfigMaps (the same as configMaps's if -objects is as many).
func pagingConfigMaps(b *testing.B, kind driver.Kind) string {
	return fixture(b, kind, fmt.Sprintf("configmaps-%d", *pageObjects), nil, func(ctx context.Context, s *driver.Server) error {
		return driver.CreateConfigMaps(ctx, s.Client(), *pageObjects, workers)
	})
}

// benchPaging is benchListing of the ConfigMaps, and on miniapiserver how
// many requests of each timed listing its cache served from snapshots.
func benchPaging(b *testing.B, s *driver.Server, v driver.ListVariant) {
	var before float64
	verify := func(ctx context.Context, rc rest.Interface, v driver.ListVariant, want int) (driver.Listing, error) {
		l, err := driver.VerifiedListing(ctx, rc, v, want)
		if err == nil {
			before, err = s.ListsFromSnapshots(ctx, "configmaps")
		}
		return l, err
	}
	benchListing(b, s, v, *pageObjects, "configmaps", verify)
	if s.Kind == driver.Mini {
		after, err := s.ListsFromSnapshots(b.Context(), "configmaps")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric((after-before)/float64(b.N), "snapshot-lists/op")
	}
}

// benchFirstPages lists -pagination-first-pages first pages v per op while
// a writer updates -pagination-write-rate ConfigMaps a second, between
// two readings of the heap after forced GCs.
func benchFirstPages(b *testing.B, s *driver.Server, v driver.ListVariant) {
	ctx, rc := b.Context(), s.Client().CoreV1().RESTClient()
	var took time.Duration
	var heap, growth, writes, cached float64
	for b.Loop() {
		before, err := s.HeapAfterGC(ctx)
		if err != nil {
			b.Fatal(err)
		}
		cached0, err := s.ListsFromCache(ctx, "configmaps")
		if err != nil {
			b.Fatal(err)
		}
		stop := writeSteadily(ctx, s.Client(), *pageObjects, *writeRate)
		began := time.Now()
		for range *firstPages {
			if _, err := driver.ListAll(ctx, rc, v, nil); err != nil {
				b.Fatal(err)
			}
		}
		took += time.Since(began)
		n, err := stop()
		if err != nil {
			b.Fatal(err)
		}
		cached1, err := s.ListsFromCache(ctx, "configmaps")
		if err != nil {
			b.Fatal(err)
		}
		after, err := s.HeapAfterGC(ctx)
		if err != nil {
			b.Fatal(err)
		}
		heap, growth, writes, cached = heap+before, growth+after-before, writes+float64(n), cached+cached1-cached0
	}
	n := float64(b.N)
	b.ReportMetric(float64(took)/n, "ns/op")
	b.ReportMetric(heap/n, "heap-B")
	b.ReportMetric(growth/n, "heap-growth-B")
	b.ReportMetric(writes/n, "writes/op")
	b.ReportMetric(cached/n, "cached-requests/op")
	if s.Kind == driver.Mini {
		snapshots, err := s.Snapshots(ctx, "configmaps")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(snapshots, "snapshots")
	}
}

// writeSteadily updates ConfigMaps round-robin, rate a second, one at a
// time (a slot missed by a slow update is skipped), until stop, which
// returns how many it updated.
func writeSteadily(ctx context.Context, client kubernetes.Interface, objects, rate int) (stop func() (int, error)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	prefix := strconv.FormatInt(time.Now().UnixNano(), 36) // new values on a data dir written before
	var n int
	var err error
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for ; ; n++ {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
			if e := driver.TouchConfigMap(ctx, client, n%objects, prefix+"-"+strconv.Itoa(n)); e != nil {
				if ctx.Err() == nil {
					err = e
				}
				return
			}
		}
	}()
	return func() (int, error) {
		cancel()
		<-done
		return n, err
	}
}
