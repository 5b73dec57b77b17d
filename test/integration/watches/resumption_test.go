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
	"fmt"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/informertest"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
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
	// Serial: it sets a feature gate, and restarts a server on the port it had.
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
			first, client := framework.Start(t, noCompaction)
			port := framework.ServerPort(t, first)
			framework.CreateConfigMaps(t, client, "default", 5)
			createSecret(t, client, "s1")
			createPod(t, client, "p1")

			informers := informertest.StartCountingInformers(t.Context(), t, client)
			writeOtherResources(t, client, "before")
			if err := first.Stop(); err != nil {
				t.Fatal(err)
			}

			// A server on another port: the informers retry meanwhile.
			between, client := framework.Start(t, noCompaction, func(o *server.Options) { o.DataDir = first.DataDir })
			writeOtherResources(t, client, "between")
			if tc.compact {
				framework.CompactEtcd(t, between)
			}
			if err := between.Stop(); err != nil {
				t.Fatal(err)
			}

			_, client = framework.Start(t, noCompaction, func(o *server.Options) { o.DataDir, o.SecurePort = first.DataDir, port })
			writeOtherResources(t, client, "after")
			framework.CreateCMNamed(t, client, "later")
			createSecret(t, client, "s2")
			createPod(t, client, "p2")
			for _, inf := range informers {
				inf.WaitFor(t)
			}
			relists := 0
			for _, inf := range informers {
				n := inf.Relists()
				t.Logf("%s: %d relist(s)", inf.Resource, n)
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

// TestInformersResumeAcrossARollingRestart runs two instances on one
// external etcd, with informers on each, and restarts A, then B, with
// writes in between through whichever is up: no informer relists, and the
// resourceVersions each instance handed out (in events and bookmarks)
// resume on it after its restart, whatever the other served meanwhile.
func TestInformersResumeAcrossARollingRestart(t *testing.T) {
	// Serial: it restarts servers on the ports they had.
	external := framework.ExternalEtcd(t, 0)
	noCompaction := func(o *server.Options) { o.EtcdCompactionInterval = 0 }
	a, clientA := framework.Start(t, external, noCompaction)
	b, clientB := framework.Start(t, external, noCompaction)
	createSecret(t, clientA, "s1")
	createPod(t, clientA, "p1")
	onA := informertest.StartCountingInformers(t.Context(), t, clientA)
	onB := informertest.StartCountingInformers(t.Context(), t, clientB)

	restart := func(s *testserver.Server, other kubernetes.Interface, name string) kubernetes.Interface {
		port := framework.ServerPort(t, s)
		writeOtherResources(t, other, name+"-before")
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		writeOtherResources(t, other, name+"-down")
		framework.CreateCMNamed(t, other, name+"-down") // an event the restarted instance must replay
		_, client := framework.Start(t, external, noCompaction, func(o *server.Options) { o.DataDir, o.SecurePort = s.DataDir, port })
		return client
	}
	clientA = restart(a, clientB, "a")
	restart(b, clientA, "b")

	framework.CreateCMNamed(t, clientA, "later")
	createSecret(t, clientA, "s2")
	createPod(t, clientA, "p2")
	for _, inf := range append(onA, onB...) {
		inf.WaitFor(t)
		if n := inf.Relists(); n != 0 {
			t.Errorf("%s: %d relist(s) across the rolling restart, want 0", inf.Resource, n)
		}
	}
}
