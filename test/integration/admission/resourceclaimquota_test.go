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
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestResourceClaimQuota: as kube-apiserver 1.37's ResourceQuota
// admission with upstream's ResourceClaim evaluator: a quota of
// gpu.deviceclass.resource.k8s.io/devices adds up the devices claims
// request of the gpu class, and refuses the claim past it with
// upstream's message and 403 Forbidden; the in-server controller writes
// the usage, also of requests.example.com/gpu, the gpu class's extended
// resource, and a deleted claim frees its devices. Negative control: the
// claim refused is created in a namespace without the quota.
func TestResourceClaimQuota(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ptr.To("example.com/gpu")}}
	if _, err := client.ResourceV1().DeviceClasses().Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const devices = corev1.ResourceName("gpu" + corev1.ResourceClaimsPerClass)
	const extended = corev1.ResourceName("requests.example.com/gpu")
	ns, other := framework.CreateNamespace(t, client), framework.CreateNamespace(t, client)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		devices:                                resource.MustParse("2"),
		extended:                               resource.MustParse("10"),
		"count/resourceclaims.resource.k8s.io": resource.MustParse("10"),
	}}}
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForQuota(t, client, ns, "q", devices, "0")
	waitForQuota(t, client, ns, "q", extended, "0")

	create := func(ns, name string, count int64) func(dryRun bool) error {
		return func(dryRun bool) error {
			opts := metav1.CreateOptions{}
			if dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			_, err := client.ResourceV1().ResourceClaims(ns).Create(t.Context(), gpuClaim(name, count), opts)
			return err
		}
	}
	if err := create(ns, "two", 2)(false); err != nil {
		t.Fatal(err)
	}
	refused(t, create(ns, "one", 1), `resourceclaims.resource.k8s.io "one" is forbidden: exceeded quota: q, requested: gpu.deviceclass.resource.k8s.io/devices=1, used: gpu.deviceclass.resource.k8s.io/devices=2, limited: gpu.deviceclass.resource.k8s.io/devices=2`)
	waitForQuota(t, client, ns, "q", devices, "2")
	waitForQuota(t, client, ns, "q", extended, "2")
	waitForQuota(t, client, ns, "q", "count/resourceclaims.resource.k8s.io", "1")
	if err := create(other, "one", 1)(false); err != nil {
		t.Errorf("without a quota: got %v, want the claim created", err)
	}

	if err := client.ResourceV1().ResourceClaims(ns).Delete(t.Context(), "two", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForQuota(t, client, ns, "q", devices, "0")
	waitForQuota(t, client, ns, "q", extended, "0")
	framework.WaitUntil(t, func() bool { return create(ns, "one", 1)(false) == nil }, "a claim created once another was deleted")
}

// gpuClaim asks for count devices of the gpu class.
func gpuClaim(name string, count int64) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count,
		}}}},
	}}
}
