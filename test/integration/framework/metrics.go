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

package framework

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// The metrics of every in-process server are the process's (the
// registry each /metrics serves): a test that compares counts is serial,
// unless it counts a group or resource that no other test of its package
// uses.

// ScrapeMetrics returns the metrics of the servers in this process,
// gathered from the registry s's /metrics serves (every in-process server
// shares it), without encoding and parsing them as text.
func ScrapeMetrics(t *testing.T, _ *testserver.Server) testutil.Metrics {
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

// ScrapeEndpoint reads s's /metrics.
func ScrapeEndpoint(t *testing.T, s *testserver.Server) testutil.Metrics {
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

// SumSamples sums the samples of metric name whose labels include labels
// (a label missing from a sample counts as "").
func SumSamples(metrics testutil.Metrics, name string, labels map[string]string) float64 {
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

// RoutesOf runs f and returns the LISTs of resource (core, or
// "group/resource") that reached a watch cache meanwhile, by
// "source/reason". The counters are the process's, shared by every server
// in it: f must be the only LIST of resource under way.
func RoutesOf(t *testing.T, s *testserver.Server, resource string, f func()) map[string]float64 {
	group, resource, ok := strings.Cut(resource, "/")
	if !ok {
		group, resource = "", group
	}
	t.Helper()
	routes := func(m testutil.Metrics) map[string]float64 {
		r := map[string]float64{}
		for _, sample := range m["miniapiserver_watch_cache_list_requests_total"] {
			if string(sample.Metric["group"]) == group && string(sample.Metric["resource"]) == resource {
				r[string(sample.Metric["source"])+"/"+string(sample.Metric["reason"])] += float64(sample.Value)
			}
		}
		return r
	}
	before := routes(ScrapeMetrics(t, s))
	f()
	delta := map[string]float64{}
	for route, n := range routes(ScrapeMetrics(t, s)) {
		if d := n - before[route]; d != 0 {
			delta[route] = d
		}
	}
	return delta
}

// WithoutConsistencyChecks keeps the watch caches of the servers t starts
// at their default check period (5 minutes), for tests that count LISTs
// by storage: each check is a LIST from etcd, counted in
// apiserver_storage_list_total{storage="etcd"} as upstream's checker's are.
// (It sets an environment variable: t cannot be parallel.)
func WithoutConsistencyChecks(t *testing.T) {
	t.Setenv(server.ConsistencyCheckerEnv, "")
}
