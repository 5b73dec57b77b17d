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
// in-server one here): a quota of requests.cpu makes containers name it
// and adds up what they request; creating past a quota's pods or
// count/configmaps is refused with upstream's message and 403 Forbidden,
// and a deleted pod frees its place. Negative controls: with the plugin
// disabled the pod past the quota is created; so it is without the
// controller, as on kube-apiserver without kube-controller-manager: the
// quota gets no status.hard, and the plugin enforces only what
// status.hard holds.
//
// Admission reads quotas from its informer, which may be behind what a
// GET answers (as kube-apiserver's): each refusal is first awaited with
// dry runs, which change nothing.
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
		{name: "no controller", admitted: true, noController: true, opts: framework.WithoutControllers("resourcequota")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testserver.Start(t, tc.opts)
			client := kubernetes.NewForConfigOrDie(s.Config)
			ns := framework.CreateNamespace(t, client)
			pods := client.CoreV1().Pods(ns)
			create := func(name, cpu string) func(dryRun bool) error {
				return func(dryRun bool) error {
					opts := metav1.CreateOptions{}
					if dryRun {
						opts.DryRun = []string{metav1.DryRunAll}
					}
					var limits corev1.ResourceList
					if cpu != "" {
						limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
					}
					_, err := pods.Create(t.Context(), podNeeding(name, limits), opts)
					return err
				}
			}
			// One after the other: the informer that has the second's
			// status has the first's.
			for _, hard := range []corev1.ResourceList{{corev1.ResourcePods: resource.MustParse("2")}, {corev1.ResourceRequestsCPU: resource.MustParse("1")}} {
				q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
				if _, cpu := hard[corev1.ResourceRequestsCPU]; cpu {
					q.Name = "cpu"
				}
				if _, err := client.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if !tc.noController {
					for r := range hard {
						waitForQuota(t, client, ns, q.Name, r, "0")
					}
				}
			}
			if !tc.admitted {
				refused(t, create("none", ""), `pods "none" is forbidden: failed quota: cpu: must specify requests.cpu for: c`)
				checkRefused(t, create("big", "1500m")(false), false, `pods "big" is forbidden: exceeded quota: cpu, requested: requests.cpu=1500m, used: requests.cpu=0, limited: requests.cpu=1`)
			}
			for _, name := range []string{"p1", "p2"} {
				if err := create(name, "100m")(false); err != nil {
					t.Fatal(err)
				}
			}
			err := create("p3", "100m")(false)
			checkRefused(t, err, tc.admitted, `pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`)
			if tc.noController {
				if got, err := client.CoreV1().ResourceQuotas(ns).Get(t.Context(), "q", metav1.GetOptions{}); err != nil || got.Status.Hard != nil || got.Status.Used != nil {
					t.Errorf("without the controller: got status %v (%v), want none", got.Status, err)
				}
			}
			if tc.admitted {
				return
			}
			if err := pods.Delete(t.Context(), "p1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			waitForQuota(t, client, ns, "q", corev1.ResourcePods, "1")
			// A refused pod is not made: asking again is safe.
			framework.WaitUntil(t, func() bool { return create("p3", "100m")(false) == nil }, "a pod created once another was deleted")
			testConfigMapQuota(t, client, ns)
		})
	}
}

// refused waits until a dry run of create is refused with message, then
// checks that create is.
func refused(t *testing.T, create func(dryRun bool) error, message string) {
	t.Helper()
	framework.WaitUntil(t, func() bool {
		err := create(true)
		return err != nil && err.Error() == message
	}, "admission to refuse: "+message)
	checkRefused(t, create(false), false, message)
}

// testConfigMapQuota: a quota of count/configmaps counts those already
// there, and refuses the one past it.
func testConfigMapQuota(t *testing.T, client kubernetes.Interface, ns string) {
	t.Helper()
	cms := client.CoreV1().ConfigMaps(ns)
	framework.CreateCMIn(t, client, ns, "before", nil)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		"count/configmaps": resource.MustParse("1"),
	}}}
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForQuota(t, client, ns, "cm", "count/configmaps", "1")
	refused(t, func(dryRun bool) error {
		opts := metav1.CreateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "over"}}, opts)
		return err
	}, `configmaps "over" is forbidden: exceeded quota: cm, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1`)
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
