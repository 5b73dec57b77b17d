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

package lists

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestStorageListMetrics checks that LISTs are counted in
// apiserver_storage_list_total by the storage that served them: the watch
// cache for RV unset and "0" on the cache path, etcd with --watch-cache=false;
// and that the cache counts the events it receives.
func TestStorageListMetrics(t *testing.T) {
	// Serial: it sets an environment variable and counts LISTs in the
	// process's metrics.
	framework.WithoutConsistencyChecks(t)
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, client := framework.Start(t, path)
		framework.CreateConfigMaps(t, client, "default", 3)
		lists := func(m testutil.Metrics, storage string) float64 {
			return framework.SumSamples(m, "apiserver_storage_list_total", map[string]string{"group": "", "resource": "configmaps", "storage": storage, "index": ""})
		}
		before := framework.ScrapeEndpoint(t, s)
		for _, rv := range []string{"", "0"} {
			if _, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{ResourceVersion: rv}); err != nil {
				t.Fatal(err)
			}
		}
		after := framework.ScrapeEndpoint(t, s)
		cacheLists, etcdLists := lists(after, "watchcache")-lists(before, "watchcache"), lists(after, "etcd")-lists(before, "etcd")
		wantCache, wantEtcd := 2.0, 0.0
		if !framework.WatchCacheOn(path) {
			wantCache, wantEtcd = 0, 2
		}
		if cacheLists != wantCache || etcdLists != wantEtcd {
			t.Errorf("2 LISTs counted storage=watchcache %v, storage=etcd %v; want %v, %v", cacheLists, etcdLists, wantCache, wantEtcd)
		}

		if !framework.WatchCacheOn(path) {
			return
		}
		received := func(m testutil.Metrics) float64 {
			return framework.SumSamples(m, "apiserver_watch_cache_events_received_total", map[string]string{"group": "", "resource": "configmaps"})
		}
		want := received(after) + 5
		framework.CreateConfigMaps(t, client, framework.CreateNamespace(t, client), 5)
		var got float64
		err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			got = received(framework.ScrapeMetrics(t, s))
			return got >= want, nil
		})
		if err != nil {
			t.Errorf("apiserver_watch_cache_events_received_total: got %v after 5 writes, want >= %v", got, want)
		}
	})
}
