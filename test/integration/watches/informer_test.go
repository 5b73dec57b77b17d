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

package watches

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestInformersSyncWithWatchList runs client-go v0.37 informers, which use
// streaming watch-list by default: they must sync without a LIST, keep
// watching, and the server must log no error meanwhile.
func TestInformersSyncWithWatchList(t *testing.T) {
	// Serial: it counts the LISTs of configmaps in the process's
	// apiserver_request_total, and reads LoggedErrors, which has every
	// running server's klog errors.
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, client := framework.Start(t, path)
		if lists := syncInformers(t, s, client); lists != 0 {
			t.Errorf("informer sync issued %d LIST requests, want 0 (watch-list)", lists)
		}
		if e := s.LoggedErrors(); len(e) > 0 {
			t.Errorf("server logged errors: %v", e)
		}
	})
}

// syncInformers creates 20 configmaps in default, starts a configmap and a
// pod informer (an empty collection must sync too), checks that they sync
// and see a configmap created later, and returns how many LIST requests for
// configmaps the server served meanwhile.
func syncInformers(t *testing.T, s *testserver.Server, client kubernetes.Interface) int {
	t.Helper()
	framework.CreateConfigMaps(t, client, "default", 20)
	listsBefore := requestCount(t, s, "LIST", "configmaps")

	factory := informers.NewSharedInformerFactory(client, 0)
	cmInformer := factory.Core().V1().ConfigMaps()
	seen := make(chan string, 100)
	_, err := cmInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { seen <- obj.(*corev1.ConfigMap).Name },
	})
	if err != nil {
		t.Fatal(err)
	}
	podInformer := factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	factory.Start(ctx.Done())
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), cmInformer.Informer().HasSynced, podInformer.HasSynced) {
		t.Fatal("informers did not sync")
	}
	if got, err := cmInformer.Lister().ConfigMaps("default").List(labels.Everything()); err != nil || len(got) != 20 {
		t.Errorf("lister: got %d configmaps, %v; want 20", len(got), err)
	}
	lists := requestCount(t, s, "LIST", "configmaps") - listsBefore

	framework.CreateCMNamed(t, client, "later")
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	for name := ""; name != "later"; {
		select {
		case name = <-seen:
		case <-waitCtx.Done():
			t.Fatal("informer did not see a configmap created after sync")
		}
	}
	return lists
}

// requestCount reads apiserver_request_total for verb and resource from /metrics.
func requestCount(t *testing.T, s *testserver.Server, verb, resource string) int {
	t.Helper()
	return int(framework.SumSamples(framework.ScrapeMetrics(t, s), "apiserver_request_total", map[string]string{"verb": verb, "resource": resource}))
}
