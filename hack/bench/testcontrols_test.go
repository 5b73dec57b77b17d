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
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// testControlsListed is how many ConfigMaps BenchmarkTestControlsCost lists.
const testControlsListed = 1000

// BenchmarkTestControlsCost times requests to an in-process server with
// the test controls on (pkg/testserver's and pkg/envtest's default: every
// request, storage call and watch cache event passes the fault hooks, with
// no rule made) and off: creates of ConfigMaps (16 clients at once), a LIST
// of testControlsListed of them, and an update until a watch has its event.
// kube-apiserver has nothing to compare with.
func BenchmarkTestControlsCost(b *testing.B) {
	if *onlyKind == string(driver.Upstream) {
		b.Skip("kube-apiserver has no test controls")
	}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "controls=off", true: "controls=on"}[on], func(b *testing.B) {
			s := startServer(b, func(o *server.Options) { o.TestControls = on })
			benchmarkRequests(b, kubernetes.NewForConfigOrDie(s.Config))
		})
	}
}

// startServer starts an in-process server with options, stopped when b ends.
func startServer(b *testing.B, options func(*server.Options)) *testserver.Server {
	s, err := testserver.New(options)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Stop() })
	return s
}

// benchmarkRequests runs BenchmarkTestControlsCost's requests through
// client. (Run each server in a process of its own: the second server of
// one process is the slower.)
func benchmarkRequests(b *testing.B, client kubernetes.Interface) {
	ctx := b.Context()
	if err := driver.ForEach(ctx, testControlsListed, workers, func(ctx context.Context, i int) error {
		return createConfigMap(ctx, client, fmt.Sprintf("listed-%05d", i), map[string]string{"listed": "true"}, false)
	}); err != nil {
		b.Fatal(err)
	}
	var made atomic.Int64 // names across the sub-benchmark's runs
	b.Run("op=create", func(b *testing.B) {
		b.ResetTimer()
		if err := driver.ForEach(ctx, b.N, workers, func(ctx context.Context, _ int) error {
			return createConfigMap(ctx, client, fmt.Sprintf("made-%d", made.Add(1)), nil, false)
		}); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("op=list", func(b *testing.B) {
		for b.Loop() {
			list, err := client.CoreV1().ConfigMaps(driver.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "listed=true"})
			if err != nil || len(list.Items) != testControlsListed {
				b.Fatalf("list: %d items, %v", len(list.Items), err)
			}
		}
	})
	b.Run("op=watch-event", func(b *testing.B) {
		cms := client.CoreV1().ConfigMaps(driver.Namespace)
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=listed-00000", ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		<-w.ResultChan() // the initial ADDED
		i := 0
		for b.Loop() {
			i++
			cm, err := cms.Get(ctx, "listed-00000", metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				b.Fatal(err)
			}
			cm.Data = map[string]string{"k": fmt.Sprint(i)}
			if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				b.Fatal(err)
			}
			for ev := range w.ResultChan() {
				if ev.Type == watch.Modified {
					break
				}
			}
		}
	})
}
