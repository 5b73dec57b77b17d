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
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestInformersResumeAcrossRestart runs client-go informers on ConfigMaps,
// Secrets and Pods across a restart of the server on the same data dir,
// with writes to other resources meanwhile (by the server before it stops,
// and by a server in between that the informers cannot reach), then writes
// to the watched ones. With EfficientWatchResumption the informers resume
// their watches where they were (the final bookmark, and a history
// replayed from etcd's compaction revision): no informer lists again. The
// two negative controls relist: the gate off (upstream's behaviour), and a
// compaction past the informers' resourceVersion.
func TestInformersResumeAcrossRestart(t *testing.T) {
	for _, tc := range []struct {
		name       string
		gate       bool
		compact    bool
		wantRelist bool
	}{
		{name: "EfficientWatchResumption", gate: true},
		{name: "gate off", gate: false, wantRelist: true},
		{name: "compacted past the informers", gate: true, compact: true, wantRelist: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EfficientWatchResumption, tc.gate)
			noCompaction := func(o *server.Options) { o.EtcdCompactionInterval = 0 }
			first, client := start(t, noCompaction)
			port := serverPort(t, first)
			createConfigMaps(t, client, "default", 5)
			createSecret(t, client, "s1")
			createPod(t, client, "p1")

			informers := startCountingInformers(t, client)
			writeOtherResources(t, client, "before")
			if err := first.Stop(); err != nil {
				t.Fatal(err)
			}

			// A server on another port: the informers retry meanwhile.
			between, client := start(t, noCompaction, func(o *server.Options) { o.DataDir = first.DataDir })
			writeOtherResources(t, client, "between")
			if tc.compact {
				compactEtcd(t, between)
			}
			if err := between.Stop(); err != nil {
				t.Fatal(err)
			}

			_, client = start(t, noCompaction, func(o *server.Options) { o.DataDir, o.SecurePort = first.DataDir, port })
			writeOtherResources(t, client, "after")
			createCMNamed(t, client, "later")
			createSecret(t, client, "s2")
			createPod(t, client, "p2")
			for _, inf := range informers {
				inf.waitFor(t)
			}
			relists := 0
			for _, inf := range informers {
				n := inf.relists()
				t.Logf("%s: %d relist(s)", inf.resource, n)
				relists += n
			}
			switch {
			case tc.wantRelist && relists == 0:
				t.Errorf("no informer relisted, want at least one")
			case !tc.wantRelist && relists > 0:
				t.Errorf("informers relisted %d time(s) across the restart, want 0", relists)
			}
		})
	}
}

// countingInformer is an informer whose ListerWatcher counts the LISTs
// and the watch-lists (sendInitialEvents=true) it sends: each is a relist
// once the informer has synced.
type countingInformer struct {
	resource  string
	informer  cache.SharedIndexInformer
	lists     atomic.Int32
	watchList atomic.Int32
	// last is the name the test writes last; waitFor waits until the informer holds it.
	last string
}

func (c *countingInformer) relists() int { return int(c.lists.Load()+c.watchList.Load()) - 1 }

// reconnectBound covers client-go's watch retry backoff: a reflector whose
// watch failed several times while the server was down waits up to 30 s
// times a jitter of up to 2 before it tries again.
const reconnectBound = 2 * time.Minute

func (c *countingInformer) waitFor(t *testing.T) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, reconnectBound, true, func(context.Context) (bool, error) {
		return slices.Contains(c.informer.GetStore().ListKeys(), c.last), nil
	})
	if err != nil {
		t.Fatalf("the %s informer never saw %s", c.resource, c.last)
	}
}

// startCountingInformers starts synced ConfigMap, Secret and Pod informers
// (client-go's default: watch-list) that run until the test ends.
func startCountingInformers(t *testing.T, client kubernetes.Interface) []*countingInformer {
	t.Helper()
	core := client.CoreV1().RESTClient()
	specs := []struct {
		resource, last string
		obj            runtime.Object
	}{
		{"configmaps", "default/later", &corev1.ConfigMap{}},
		{"secrets", "default/s2", &corev1.Secret{}},
		{"pods", "default/p2", &corev1.Pod{}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var out []*countingInformer
	for _, spec := range specs {
		ci := &countingInformer{resource: spec.resource, last: spec.last}
		lw := cache.NewListWatchFromClient(core, spec.resource, metav1.NamespaceAll, fields.Everything())
		counted := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				ci.lists.Add(1)
				return lw.ListWithContext(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
					ci.watchList.Add(1)
				}
				return lw.WatchWithContext(ctx, opts)
			},
		}
		ci.informer = cache.NewSharedIndexInformer(counted, spec.obj, 0, cache.Indexers{})
		go ci.informer.RunWithContext(ctx)
		out = append(out, ci)
	}
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	for _, ci := range out {
		if !cache.WaitForCacheSync(syncCtx.Done(), ci.informer.HasSynced) {
			t.Fatalf("the %s informer did not sync", ci.resource)
		}
		if n := ci.lists.Load() + ci.watchList.Load(); n != 1 {
			t.Fatalf("the %s informer synced with %d requests, want 1", ci.resource, n)
		}
	}
	return out
}

// writeOtherResources writes leases and serviceaccounts, which no informer
// watches: etcd's revision moves on while the watched resources stay idle.
func writeOtherResources(t *testing.T, client kubernetes.Interface, prefix string) {
	t.Helper()
	for i := range 3 {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := client.CoordinationV1().Leases("default").Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.CoreV1().ServiceAccounts("default").Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func createSecret(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().Secrets("default").Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createPod(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if _, err := client.CoreV1().Pods("default").Create(t.Context(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// serverPort is the port s serves on.
func serverPort(t *testing.T, s *testserver.Server) int {
	t.Helper()
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestInformersResumeAcrossARollingRestart runs two instances on one
// external etcd, with informers on each, and restarts A, then B, with
// writes in between through whichever is up: no informer relists, and the
// resourceVersions each instance handed out (in events and bookmarks)
// resume on it after its restart, whatever the other served meanwhile.
func TestInformersResumeAcrossARollingRestart(t *testing.T) {
	external := externalEtcd(t, 0)
	noCompaction := func(o *server.Options) { o.EtcdCompactionInterval = 0 }
	a, clientA := start(t, external, noCompaction)
	b, clientB := start(t, external, noCompaction)
	createSecret(t, clientA, "s1")
	createPod(t, clientA, "p1")
	onA := startCountingInformers(t, clientA)
	onB := startCountingInformers(t, clientB)

	restart := func(s *testserver.Server, other kubernetes.Interface, name string) kubernetes.Interface {
		port := serverPort(t, s)
		writeOtherResources(t, other, name+"-before")
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		writeOtherResources(t, other, name+"-down")
		createCMNamed(t, other, name+"-down") // an event the restarted instance must replay
		_, client := start(t, external, noCompaction, func(o *server.Options) { o.DataDir, o.SecurePort = s.DataDir, port })
		return client
	}
	clientA = restart(a, clientB, "a")
	restart(b, clientA, "b")

	createCMNamed(t, clientA, "later")
	createSecret(t, clientA, "s2")
	createPod(t, clientA, "p2")
	for _, inf := range append(onA, onB...) {
		inf.waitFor(t)
		if n := inf.relists(); n != 0 {
			t.Errorf("%s: %d relist(s) across the rolling restart, want 0", inf.resource, n)
		}
	}
}
