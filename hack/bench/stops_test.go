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
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var stopWatches = flag.Int("stop-watches", 1000, "ConfigMap watches open when BenchmarkStop sends SIGTERM")

const (
	stopKillAfter    = 2 * time.Minute  // SIGTERM→SIGKILL: past kube-apiserver's minute-long shutdown timeout
	stopDrainTimeout = 30 * time.Second // for every watch to end once the server has exited
)

// BenchmarkStop: ns/op is SIGTERM→exit of a server (kube-apiserver's,
// without its etcd's) with -stop-watches client-go watches of ConfigMaps
// open, every other one with allowWatchBookmarks, -watchers-per-conn per
// HTTP/2 connection, and the client's other connection closed; watches=0
// is the control, that idle connection all it has open. Of the watches,
// bookmarked-watches/op ended after exactly one BOOKMARK (which they
// allowed), stray-watches/op got anything else, and unended-watches/op
// were still open stopDrainTimeout after the exit. An op also starts the
// server on a fresh data dir and opens the watches, untimed but counted by
// -benchtime: one op takes seconds. A stop that takes over stopKillAfter
// fails. kube-apiserver's stop with watches open, a minute, runs with its
// cache on only and in the first -slow-upstream-rounds rounds.
func BenchmarkStop(b *testing.B) {
	for _, v := range []struct {
		watches int
		cache   string
	}{{*stopWatches, "on"}, {*stopWatches, "off"}, {0, "on"}} {
		b.Run(fmt.Sprintf("watches=%d/cache=%s", v.watches, v.cache), func(b *testing.B) {
			onEach(b, func(b *testing.B, kind driver.Kind) {
				if kind == driver.Upstream && v.cache == "off" {
					b.Skip("kube-apiserver waits a minute for open watches with its cache on or off; once is enough")
				}
				if v.watches > 0 {
					skipSlowUpstream(b, kind)
				}
				benchStop(b, kind, v.watches, v.cache)
			})
		})
	}
}

// stopWatch is how one watch ended: what it got before its stream did.
type stopWatch struct {
	bookmarks bool // allowWatchBookmarks
	got       []watch.EventType
}

func benchStop(b *testing.B, kind driver.Kind, n int, cache string) {
	var stopped time.Duration
	var bookmarked, stray, unended int
	for i := 0; b.Loop(); i++ {
		dir := env.Dir(fmt.Sprintf("stop-%s-%d-%s-%d", kind, n, cache, i))
		s := start(b, kind, dir, "--watch-cache="+strconv.FormatBool(cache == "on"))
		ctx, cancel := context.WithCancel(b.Context())
		ended := openStopWatches(ctx, b, s, n)
		if n > 0 { // the connection the server was started, listed and scraped on
			hc, err := rest.HTTPClientFor(s.RESTConfig())
			if err != nil {
				b.Fatal(err)
			}
			driver.CloseIdle(hc)
		}
		if err := s.StopWithin(stopKillAfter); err != nil {
			b.Fatal(err)
		}
		stopped += s.APIStopped()
		timeout := time.After(stopDrainTimeout)
	drain:
		for left := n; left > 0; left-- {
			select {
			case w := <-ended:
				switch {
				case w.bookmarks && slices.Equal(w.got, []watch.EventType{watch.Bookmark}):
					bookmarked++
				case len(w.got) > 0:
					if stray++; stray == 1 {
						b.Logf("a watch (allowWatchBookmarks=%t) got %v", w.bookmarks, w.got)
					}
				}
			case <-timeout:
				unended += left
				break drain
			}
		}
		cancel()
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(stopped)/float64(b.N), "ns/op")
	b.ReportMetric(float64(bookmarked)/float64(b.N), "bookmarked-watches/op")
	b.ReportMetric(float64(stray)/float64(b.N), "stray-watches/op")
	b.ReportMetric(float64(unended)/float64(b.N), "unended-watches/op")
}

// openStopWatches opens n watches of the ConfigMaps on s until ctx is done;
// each sends how it ended on the channel when its stream ends.
func openStopWatches(ctx context.Context, b *testing.B, s *driver.Server, n int) <-chan stopWatch {
	list, err := s.Client().CoreV1().ConfigMaps(driver.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	ended := make(chan stopWatch, n)
	var client *kubernetes.Clientset
	for i := range n {
		if i%*watchersPerConn == 0 {
			client = watchClient(b, s)
		}
		w := stopWatch{bookmarks: i%2 == 0}
		opts := metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: w.bookmarks}
		stream, err := client.CoreV1().ConfigMaps(driver.Namespace).Watch(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for ev := range stream.ResultChan() {
				w.got = append(w.got, ev.Type)
			}
			ended <- w
		}()
	}
	return ended
}
