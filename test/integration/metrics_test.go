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

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestStorageListMetrics checks that LISTs are counted in
// apiserver_storage_list_total by the storage that served them: the watch
// cache for RV unset and "0" on the cache path, etcd with --watch-cache=false;
// and that the cache counts the events it receives.
func TestStorageListMetrics(t *testing.T) {
	withoutConsistencyChecks(t)
	forEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, client := start(t, path)
		createConfigMaps(t, client, "default", 3)
		lists := func(m testutil.Metrics, storage string) float64 {
			return sumSamples(m, "apiserver_storage_list_total", map[string]string{"group": "", "resource": "configmaps", "storage": storage, "index": ""})
		}
		before := scrapeEndpoint(t, s)
		for _, rv := range []string{"", "0"} {
			if _, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{ResourceVersion: rv}); err != nil {
				t.Fatal(err)
			}
		}
		after := scrapeEndpoint(t, s)
		cacheLists, etcdLists := lists(after, "watchcache")-lists(before, "watchcache"), lists(after, "etcd")-lists(before, "etcd")
		wantCache, wantEtcd := 2.0, 0.0
		if !watchCacheOn(path) {
			wantCache, wantEtcd = 0, 2
		}
		if cacheLists != wantCache || etcdLists != wantEtcd {
			t.Errorf("2 LISTs counted storage=watchcache %v, storage=etcd %v; want %v, %v", cacheLists, etcdLists, wantCache, wantEtcd)
		}

		if !watchCacheOn(path) {
			return
		}
		received := func(m testutil.Metrics) float64 {
			return sumSamples(m, "apiserver_watch_cache_events_received_total", map[string]string{"group": "", "resource": "configmaps"})
		}
		want := received(after) + 5
		createConfigMaps(t, client, createNamespace(t, client), 5)
		var got float64
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			got = received(scrapeMetrics(t, s))
			return got >= want, nil
		})
		if err != nil {
			t.Errorf("apiserver_watch_cache_events_received_total: got %v after 5 writes, want >= %v", got, want)
		}
	})
}

// scrapeMetrics returns the metrics of the servers in this process,
// gathered from the registry s's /metrics serves (every in-process server
// shares it), without encoding and parsing them as text.
func scrapeMetrics(t *testing.T, _ *testserver.Server) testutil.Metrics {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, families...)
	if err != nil {
		t.Fatal(err)
	}
	metrics := testutil.NewMetrics()
	for _, sample := range samples {
		name := string(sample.Metric[model.MetricNameLabel])
		metrics[name] = append(metrics[name], sample)
	}
	return metrics
}

// scrapeEndpoint reads s's /metrics.
func scrapeEndpoint(t *testing.T, s *testserver.Server) testutil.Metrics {
	t.Helper()
	body, err := kubernetes.NewForConfigOrDie(s.Config).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	metrics := testutil.NewMetrics()
	if err := testutil.ParseMetrics(string(body), &metrics); err != nil {
		t.Fatal(err)
	}
	return metrics
}

// sumSamples sums the samples of metric name whose labels include labels
// (a label missing from a sample counts as "").
func sumSamples(metrics testutil.Metrics, name string, labels map[string]string) float64 {
	var total float64
	for _, sample := range metrics[name] {
		got := map[string]string{}
		for k, v := range sample.Metric {
			got[string(k)] = string(v)
		}
		if matches(got, labels) {
			total += float64(sample.Value)
		}
	}
	return total
}

func matches(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// withoutConsistencyChecks keeps the watch caches of the servers t starts
// at their default check period (5 minutes), for tests that count LISTs
// by storage: each check is a LIST from etcd, counted in
// apiserver_storage_list_total{storage="etcd"} as upstream's checker's are.
func withoutConsistencyChecks(t *testing.T) {
	t.Setenv(server.ConsistencyCheckerEnv, "")
}
