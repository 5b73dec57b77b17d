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

package admission

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestResourceQuota: as kube-apiserver 1.37's ResourceQuota admission
// with kube-controller-manager's resourcequota controller (the
// in-server one here): creating past a quota's pods or count/configmaps
// is refused with upstream's message and 403 Forbidden, a deleted pod
// frees its place, and a quota of requests.cpu makes containers name
// it. Negative controls: with the plugin disabled the pod past the quota
// is created; so it is without the controller, as on kube-apiserver
// without kube-controller-manager: the quota gets no status.hard, and
// the plugin enforces only what status.hard holds.
func TestResourceQuota(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		opts         func(*server.Options)
		admitted     bool
		noController bool
	}{
		{name: "on", opts: func(*server.Options) {}},
		{name: "plugin disabled", admitted: true, opts: func(o *server.Options) {
			o.DisableAdmissionPlugins = append(o.DisableAdmissionPlugins, "ResourceQuota")
		}},
		{name: "no controller", admitted: true, noController: true, opts: func(o *server.Options) {
			o.Controllers = append([]string{"-resourcequota"}, o.Controllers...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, tc.opts)
			client := kubernetes.NewForConfigOrDie(s.Config)
			ns := framework.CreateNamespace(t, client)
			q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
				corev1.ResourcePods: resource.MustParse("2"),
			}}}
			if _, err := client.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if !tc.noController {
				waitForQuota(t, client, ns, "q", corev1.ResourcePods, "0")
			}
			for _, name := range []string{"p1", "p2"} {
				if _, err := client.CoreV1().Pods(ns).Create(t.Context(), podNeeding(name, nil), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := client.CoreV1().Pods(ns).Create(t.Context(), podNeeding("p3", nil), metav1.CreateOptions{})
			checkRefused(t, err, tc.admitted, `pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`)
			if tc.noController {
				if got, err := client.CoreV1().ResourceQuotas(ns).Get(t.Context(), "q", metav1.GetOptions{}); err != nil || got.Status.Hard != nil || got.Status.Used != nil {
					t.Errorf("without the controller: got status %v (%v), want none", got.Status, err)
				}
			}
			if tc.admitted {
				return
			}
			waitForQuota(t, client, ns, "q", corev1.ResourcePods, "2")
			if err := client.CoreV1().Pods(ns).Delete(t.Context(), "p1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			waitForQuota(t, client, ns, "q", corev1.ResourcePods, "1")
			if _, err := client.CoreV1().Pods(ns).Create(t.Context(), podNeeding("p3", nil), metav1.CreateOptions{}); err != nil {
				t.Errorf("a pod once another was deleted: got %v, want it created", err)
			}
			testConfigMapQuota(t, client, ns)
			testCPUQuota(t, client, ns)
		})
	}
}

// testConfigMapQuota: a quota of count/configmaps counts those already
// there (kube-root-ca.crt), and refuses the one past it.
func testConfigMapQuota(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"count/configmaps": resource.MustParse("3"),
	}}}
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	existing, err := client.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitForQuota(t, client, ns, "cm", "count/configmaps", fmt.Sprint(len(existing.Items)))
	for i := len(existing.Items); i < 3; i++ {
		framework.CreateCMIn(t, client, ns, fmt.Sprintf("c%d", i), nil)
	}
	_, err = client.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "over"}}, metav1.CreateOptions{})
	checkRefused(t, err, false, `configmaps "over" is forbidden: exceeded quota: cm, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3`)
}

// testCPUQuota: a quota of requests.cpu makes each container request cpu
// (upstream's Constraints), and adds up what they request.
func testCPUQuota(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "cpu"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourceRequestsCPU: resource.MustParse("1"),
	}}}
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForQuota(t, client, ns, "cpu", corev1.ResourceRequestsCPU, "0")
	// The pods quota is full again: free a place first.
	if err := client.CoreV1().Pods(ns).Delete(t.Context(), "p2", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	waitForQuota(t, client, ns, "q", corev1.ResourcePods, "1")
	_, err := client.CoreV1().Pods(ns).Create(t.Context(), podNeeding("none", nil), metav1.CreateOptions{})
	checkRefused(t, err, false, `pods "none" is forbidden: failed quota: cpu: must specify requests.cpu for: c`)
	big := podNeeding("big", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")})
	_, err = client.CoreV1().Pods(ns).Create(t.Context(), big, metav1.CreateOptions{})
	checkRefused(t, err, false, `pods "big" is forbidden: exceeded quota: cpu, requested: requests.cpu=1500m, used: requests.cpu=0, limited: requests.cpu=1`)
}

// waitForQuota waits until quota name's status has hard set and used of
// resource at want.
func waitForQuota(t *testing.T, client kubernetes.Interface, ns, name string, r corev1.ResourceName, want string) {
	t.Helper()
	framework.WaitUntil(t, func() bool {
		q, err := client.CoreV1().ResourceQuotas(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil || q.Status.Hard == nil {
			return false
		}
		used, ok := q.Status.Used[r]
		return ok && used.Cmp(resource.MustParse(want)) == 0
	}, fmt.Sprintf("quota %s/%s: used %s = %s", ns, name, r, want))
}
