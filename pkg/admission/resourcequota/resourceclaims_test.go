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

package resourcequota

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

const implicitGPU = corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + "gpu")

func exactly(class string, mode resourcev1.DeviceAllocationMode, count int64) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: mode, Count: count}}
}

func firstAvailable(subs ...resourcev1.DeviceSubRequest) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: "req", FirstAvailable: subs}
}

func sub(class string, mode resourcev1.DeviceAllocationMode, count int64) resourcev1.DeviceSubRequest {
	return resourcev1.DeviceSubRequest{Name: "sub", DeviceClassName: class, AllocationMode: mode, Count: count}
}

// testClaim is upstream's testResourceClaim: extended, the claim the
// scheduler makes for pod's extended resources.
func testClaim(name, pod string, requests ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: requests}},
	}
	if pod != "" {
		claim.Annotations = map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}
		claim.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod, UID: "uid", Controller: ptr.To(true)}}
	}
	return claim
}

func testPod(name string, status string, init, containers []corev1.ResourceList) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid"}}
	for i, r := range init {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "init-" + string(rune('a'+i)), Resources: corev1.ResourceRequirements{Requests: r}})
	}
	for i, r := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "c-" + string(rune('a'+i)), Resources: corev1.ResourceRequirements{Requests: r}})
	}
	if status != "" {
		pod.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: status}
	}
	return pod
}

// testExtendedResources: the gpu class, whose explicit extended resource
// is example.com/gpu, the pods, and others as every pod's other claims.
func testExtendedResources(t *testing.T, others *[]*resourcev1.ResourceClaim, pods ...*corev1.Pod) *ExtendedResources {
	t.Helper()
	classes := newDeviceClasses()
	classes.OnAdd(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ptr.To("example.com/gpu")}}, true)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	owned := func(string, types.UID) ([]*resourcev1.ResourceClaim, error) { return *others, nil }
	return &ExtendedResources{classes: classes, pods: corev1listers.NewPodLister(indexer), owned: owned}
}

// TestResourceClaimUsage: upstream's TestResourceClaimEvaluatorUsage.
func TestResourceClaimUsage(t *testing.T) {
	one := corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	implicit := corev1.ResourceList{implicitGPU: resource.MustParse("1")}
	both := corev1.ResourceList{"example.com/gpu": resource.MustParse("1"), implicitGPU: resource.MustParse("1")}
	var others []*resourcev1.ResourceClaim
	x := testExtendedResources(t, &others,
		testPod("pod-implicit", "foo", nil, []corev1.ResourceList{implicit}),
		testPod("pod-explicit", "foo", []corev1.ResourceList{one}, nil),
		testPod("pod-hybrid", "foo", []corev1.ResourceList{both}, []corev1.ResourceList{both}),
		testPod("pod-nil-status", "", []corev1.ResourceList{one}, []corev1.ResourceList{implicit}),
		testPod("pod-init", "foo", []corev1.ResourceList{both, both}, []corev1.ResourceList{both}))
	withClasses := newResourceClaimEvaluator(nil, x, clock.RealClock{})
	plain := newResourceClaimEvaluator(nil, nil, clock.RealClock{})

	exact := resourcev1.DeviceAllocationModeExactCount
	all := resourcev1.DeviceAllocationModeAll
	gpu1 := exactly("gpu", exact, 1)
	nilStatus := testClaim("foo", "pod-nil-status", gpu1, gpu1)
	nilStatusCopy := nilStatus.DeepCopy()
	nilStatusCopy.Name = "foo-copy"
	admin := exactly("gpu", exact, 1)
	admin.Exactly.AdminAccess = ptr.To(true)
	const count = "count/resourceclaims.resource.k8s.io"
	const devices = "gpu.deviceclass.resource.k8s.io/devices"
	const requests = "requests.deviceclass.resource.kubernetes.io/gpu"
	for _, tt := range []struct {
		name      string
		evaluator *resourceClaimEvaluator
		claim     *resourcev1.ResourceClaim
		others    []*resourcev1.ResourceClaim
		want      corev1.ResourceList
	}{
		{name: "implicit-extended-resource-claim", evaluator: withClasses, claim: testClaim("foo", "pod-implicit", gpu1),
			want: list(count, "1", devices, "1", "requests.example.com/gpu", "1")},
		{name: "explicit-extended-resource-claim", evaluator: withClasses, claim: testClaim("foo", "pod-explicit", gpu1),
			want: list(count, "1", devices, "1", requests, "1")},
		{name: "hybrid-extended-resource-claim", evaluator: withClasses, claim: testClaim("foo", "pod-hybrid", gpu1, gpu1),
			want: list(count, "1", devices, "2", requests, "1", "requests.example.com/gpu", "1")},
		{name: "nil-status-extended-resource-claim", evaluator: withClasses, claim: nilStatus,
			want: list(count, "1", devices, "2", requests, "1", "requests.example.com/gpu", "1")},
		// Another claim of the same pod, created as early and named
		// first: this one gets nothing off for the pod's requests.
		{name: "nil-status-two-extended-resource-claims", evaluator: withClasses, claim: nilStatusCopy, others: []*resourcev1.ResourceClaim{nilStatus},
			want: list(count, "1", devices, "2", requests, "2", "requests.example.com/gpu", "2")},
		{name: "init-extended-resource-claim", evaluator: withClasses, claim: testClaim("foo", "pod-init", gpu1, gpu1),
			want: list(count, "1", devices, "2", requests, "1", "requests.example.com/gpu", "1")},
		{name: "simple", claim: testClaim("foo", "", gpu1), want: list(count, "1", devices, "1", requests, "1")},
		{name: "many-requests", claim: testClaim("foo", "", gpu1, gpu1, gpu1, gpu1, gpu1), want: list(count, "1", devices, "5", requests, "5")},
		{name: "count", claim: testClaim("foo", "", exactly("gpu", exact, 5)), want: list(count, "1", devices, "5", requests, "5")},
		{name: "all", claim: testClaim("foo", "", exactly("gpu", all, 0)), want: list(count, "1", devices, "32", requests, "32")},
		{name: "unknown-count-mode", claim: testClaim("foo", "", exactly("gpu", "future-mode", 1)), want: list(count, "1", devices, "0")},
		// Admins are not exempt from quota.
		{name: "admin", claim: testClaim("foo", "", admin), want: list(count, "1", devices, "1", requests, "1")},
		{name: "prioritized-list", claim: testClaim("foo", "", firstAvailable(sub("gpu", exact, 1))), want: list(count, "1", devices, "1", requests, "1")},
		{name: "prioritized-list-multiple-subrequests", claim: testClaim("foo", "", firstAvailable(sub("gpu", exact, 2), sub("gpu", exact, 1))),
			want: list(count, "1", devices, "2", requests, "2")},
		{name: "prioritized-list-multiple-subrequests-allocation-mode-all", claim: testClaim("foo", "", firstAvailable(sub("gpu", exact, 1), sub("gpu", all, 0))),
			want: list(count, "1", devices, "32", requests, "32")},
		{name: "prioritized-list-multiple-subrequests-different-device-classes", claim: testClaim("foo", "", firstAvailable(sub("gpu", exact, 1), sub("tpu", all, 0))),
			want: list(count, "1", devices, "1", requests, "1", "tpu.deviceclass.resource.k8s.io/devices", "32", "requests.deviceclass.resource.kubernetes.io/tpu", "32")},
		{name: "two-requests-two-classes", claim: testClaim("foo", "", gpu1, exactly("tpu", exact, 3)),
			want: list(count, "1", devices, "1", requests, "1", "tpu.deviceclass.resource.k8s.io/devices", "3", "requests.deviceclass.resource.kubernetes.io/tpu", "3")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			others = tt.others
			e := tt.evaluator
			if e == nil {
				e = plain
			}
			got, err := e.Usage(tt.claim)
			if err != nil {
				t.Fatal(err)
			}
			sameUsage(t, got, tt.want)
		})
	}
}

// TestResourceClaimMatchingResources: upstream's
// TestResourceClaimEvaluatorMatchingResources.
func TestResourceClaimMatchingResources(t *testing.T) {
	var others []*resourcev1.ResourceClaim
	e := newResourceClaimEvaluator(nil, testExtendedResources(t, &others), clock.RealClock{})
	for _, tt := range []struct {
		name        string
		items, want []corev1.ResourceName
	}{
		{name: "supported-resources",
			items: []corev1.ResourceName{"count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices", "requests.example.com/gpu", "requests.deviceclass.resource.kubernetes.io/gpu"},
			want:  []corev1.ResourceName{"count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices", "requests.example.com/gpu", "requests.deviceclass.resource.kubernetes.io/gpu"}},
		{name: "unsupported-resources",
			items: []corev1.ResourceName{"resourceclaims", "storage", "ephemeral-storage", "bronze.deviceclass.resource.k8s.io/storage", "gpu.storage.k8s.io/requests.storage",
				"requests.example.com/tpu", "requests.deviceclass.resource.kubernetes.io/tpu"},
			want: []corev1.ResourceName{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, e.MatchingResources(tt.items)); diff != "" {
				t.Errorf("got -want +got:\n%s", diff)
			}
		})
	}
}

// TestResourceClaimHandles: upstream's TestResourceClaimEvaluatorHandles.
func TestResourceClaimHandles(t *testing.T) {
	e := newResourceClaimEvaluator(nil, nil, clock.RealClock{})
	gvr := resourcev1.SchemeGroupVersion.WithResource("resourceclaims")
	for _, tt := range []struct {
		name        string
		op          admission.Operation
		subresource string
		want        bool
	}{
		{name: "create", op: admission.Create, want: true},
		{name: "update", op: admission.Update, want: true},
		{name: "delete", op: admission.Delete},
		{name: "connect", op: admission.Connect},
		{name: "create-subresource", op: admission.Create, subresource: "status"},
		{name: "update-subresource", op: admission.Update, subresource: "status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(nil, nil, schema.GroupVersionKind{}, "ns", "foo", gvr, tt.subresource, tt.op, nil, false, nil)
			if got := e.Handles(a); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
