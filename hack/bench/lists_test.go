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
	"fmt"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

// listVariants are the ways BenchmarkList lists the -objects ConfigMaps
// with the watch cache on: RV unset (a consistent read), RV=0, and at an
// exact resourceVersion older than driver.ExactRVWrites updates, in JSON
// and protobuf, in one request and paged by 500.
func listVariants() []driver.ListVariant {
	exact := string(metav1.ResourceVersionMatchExact)
	return []driver.ListVariant{
		{Accept: driver.AcceptJSON},
		{Accept: driver.AcceptJSON, Limit: 500},
		{Accept: driver.AcceptProtobuf},
		{Accept: driver.AcceptProtobuf, Limit: 500},
		{Accept: driver.AcceptJSON, RV: "0"},
		{Accept: driver.AcceptProtobuf, RV: "0"},
		{Accept: driver.AcceptJSON, RV: "exact", Match: exact},
		{Accept: driver.AcceptProtobuf, RV: "exact", Match: exact},
		{Accept: driver.AcceptProtobuf, Limit: 500, RV: "exact", Match: exact},
	}
}

// BenchmarkList times full listings of the -objects ConfigMaps, with the
// watch cache (cache=on: listVariants) and without it (cache=off: RV=0,
// which the cache serves and etcd otherwise). ns/op is per full listing;
// server-B/op what the server (kube-apiserver and its etcd) allocated for
// it; cached-requests/op how many of its requests the watch cache served.
// Responses are gzip-compressed, as client-go asks by default.
func BenchmarkList(b *testing.B) {
	for _, cache := range []string{"on", "off"} {
		b.Run("cache="+cache, func(b *testing.B) { benchLists(b, cache) })
	}
}

func benchLists(b *testing.B, cache string) {
	servers := startEach(b, func(kind driver.Kind) string { return configMaps(b, kind) }, "--watch-cache="+strconv.FormatBool(cache == "on"))
	exactRV := map[driver.Kind]string{}
	for kind, s := range servers {
		if cache == "off" {
			break // it lists at RV=0 only
		}
		rv, err := driver.RVBeforeWrites(b.Context(), s.Client(), *objects)
		if err != nil {
			b.Fatal(err)
		}
		exactRV[kind] = rv
	}
	for _, v := range listVariants() {
		if cache == "off" && v.RV != "0" {
			continue
		}
		b.Run(listName(v), func(b *testing.B) {
			onEach(b, func(b *testing.B, kind driver.Kind) {
				if v.Match != "" {
					v.RV = exactRV[kind]
				}
				benchListing(b, servers[kind], v, *objects, "configmaps", driver.VerifiedListing)
			})
		})
	}
}

// BenchmarkListAfterWrite times a step controller tests take all the time:
// create a ConfigMap, then LIST the Secrets (none), a consistent read. The
// watch cache serves the LIST once it has seen etcd's current revision,
// which the create moved past anything of Secrets: the cache learns it from
// an etcd progress notification (kube-apiserver's cache asks for one every
// 100 ms). ns/op is per create and LIST; list-sec/op is the LIST's part.
func BenchmarkListAfterWrite(b *testing.B) {
	servers := startEach(b, func(driver.Kind) string { return b.TempDir() })
	written := map[driver.Kind]int{} // ConfigMaps, across runs of the sub-benchmark
	onEach(b, func(b *testing.B, kind driver.Kind) {
		c := servers[kind].Client()
		var listed time.Duration
		loop(b, func(i int) error {
			written[kind]++
			if err := createConfigMap(b.Context(), c, fmt.Sprintf("written-%06d", written[kind]), nil, false); err != nil {
				return err
			}
			began := time.Now()
			l, err := c.CoreV1().Secrets(driver.Namespace).List(b.Context(), metav1.ListOptions{})
			if i >= warmup {
				listed += time.Since(began)
			}
			if err == nil && len(l.Items) != 0 {
				err = fmt.Errorf("listed %d Secrets, want none", len(l.Items))
			}
			return err
		})
		b.ReportMetric(listed.Seconds()/float64(b.N), "list-sec/op")
	})
}

// listName is the variant's part of a benchmark name.
func listName(v driver.ListVariant) string {
	rv := v.RV
	switch {
	case v.Match != "":
		rv = "exact"
	case rv == "":
		rv = "none"
	}
	return fmt.Sprintf("format=%s/limit=%d/rv=%s", v.Format(), v.Limit, rv)
}

// verifier lists once, checking every object: want of them, each once.
type verifier func(ctx context.Context, rc rest.Interface, v driver.ListVariant, want int) (driver.Listing, error)

// benchListing verifies one listing of v on s, then times listings of v,
// each of the same shape; resource is what ListsFromCache counts.
func benchListing(b *testing.B, s *driver.Server, v driver.ListVariant, objects int, resource string, verify verifier) {
	rc := s.Client().CoreV1().RESTClient()
	shape, err := verify(b.Context(), rc, v, v.Items(objects))
	if err != nil {
		b.Fatal(err)
	}
	allocBefore, cachedBefore := listCounters(b, s, resource)
	for b.Loop() {
		l, err := driver.ListAll(b.Context(), rc, v, nil)
		if err != nil {
			b.Fatal(err)
		}
		if l != shape {
			b.Fatalf("listed %+v, the verified listing was %+v", l, shape)
		}
	}
	b.StopTimer()
	alloc, cached := listCounters(b, s, resource)
	b.ReportMetric((alloc-allocBefore)/float64(b.N), "server-B/op")
	b.ReportMetric((cached-cachedBefore)/float64(b.N), "cached-requests/op")
	b.ReportMetric(float64(shape.Bytes), "response-B/op")
}

func listCounters(b *testing.B, s *driver.Server, resource string) (alloc, cached float64) {
	alloc, err := s.AllocBytes(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	if cached, err = s.ListsFromCache(b.Context(), resource); err != nil {
		b.Fatal(err)
	}
	return alloc, cached
}
