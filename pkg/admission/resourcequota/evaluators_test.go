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
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// sameUsage compares quantities by value, as quota.Equals does.
func sameUsage(t *testing.T, got, want corev1.ResourceList) {
	t.Helper()
	if !quota.Equals(got, want) {
		t.Errorf("usage: got %v, want %v", got, want)
	}
}

// TestPodUsage: rows of upstream's TestPodEvaluatorUsage: requests and
// limits (init containers' greatest against the containers' sum), an
// ended pod counting as an object only, one past its deletion grace too.
func TestPodUsage(t *testing.T) {
	now := time.Now()
	e := newPodEvaluator(nil, testingclock.NewFakeClock(now))
	container := func(r, l corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: r, Limits: l}}
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want corev1.ResourceList
	}{
		{"init container cpu", &corev1.Pod{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container(list("cpu", "1m"), list("cpu", "2m"))},
			Containers:     []corev1.Container{container(nil, nil)},
		}}, list("requests.cpu", "1m", "limits.cpu", "2m", "cpu", "1m", "pods", "1", "count/pods", "1")},
		{"containers summed", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			container(list("memory", "1Gi", "hugepages-2Mi", "2Mi"), list("memory", "2Gi")), container(list("memory", "1Gi"), list("memory", "2Gi")),
		}}}, list("requests.memory", "2Gi", "limits.memory", "4Gi", "memory", "2Gi", "hugepages-2Mi", "2Mi", "requests.hugepages-2Mi", "2Mi", "pods", "1", "count/pods", "1")},
		{"extended resource", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(list("example.com/dongle", "3"), list("example.com/dongle", "3"))}}},
			list("requests.example.com/dongle", "3", "pods", "1", "count/pods", "1")},
		{"succeeded", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(list("cpu", "1"), nil)}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
			list("count/pods", "1")},
		{"past its grace period", &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: now.Add(-time.Minute)}, DeletionGracePeriodSeconds: ptr.To[int64](30)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{container(list("cpu", "1"), nil)}},
		}, list("count/pods", "1")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Usage(tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			sameUsage(t, got, tt.want)
		})
	}
}

// TestPodConstraints: upstream's TestPodConstraintsFunc messages.
func TestPodConstraints(t *testing.T) {
	e := newPodEvaluator(nil, nil)
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Limits: list("memory", "1Gi")}}},
		Containers:     []corev1.Container{{Name: "a"}, {Name: "b", Resources: corev1.ResourceRequirements{Requests: list("cpu", "1"), Limits: list("cpu", "1")}}},
	}}
	got := e.Constraints([]corev1.ResourceName{"requests.cpu", "limits.memory", "pods"}, pod)
	want := "must specify limits.memory for: a,b; requests.cpu for: a,init"
	if got == nil || got.Error() != want {
		t.Errorf("got %v, want %q", got, want)
	}
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: list("cpu", "1")}
	if err := e.Constraints([]corev1.ResourceName{"requests.cpu"}, pod); err != nil {
		t.Errorf("pod-level resources: got %v, want none", err)
	}
}

// TestPodScopes: the scopes a pod falls in.
func TestPodScopes(t *testing.T) {
	best := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}, ActiveDeadlineSeconds: ptr.To[int64](10), PriorityClassName: "high"}}
	guaranteed := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: list("cpu", "1", "memory", "1Gi"), Limits: list("cpu", "1", "memory", "1Gi")}}}}}
	scope := func(name corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: name, Operator: op, Values: values}
	}
	all := []corev1.ScopedResourceSelectorRequirement{
		scope(corev1.ResourceQuotaScopeTerminating, corev1.ScopeSelectorOpExists),
		scope(corev1.ResourceQuotaScopeNotTerminating, corev1.ScopeSelectorOpExists),
		scope(corev1.ResourceQuotaScopeBestEffort, corev1.ScopeSelectorOpExists),
		scope(corev1.ResourceQuotaScopeNotBestEffort, corev1.ScopeSelectorOpExists),
		scope(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "high"),
	}
	e := newPodEvaluator(nil, nil)
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want []corev1.ScopedResourceSelectorRequirement
	}{
		{"best effort, terminating, high", best, []corev1.ScopedResourceSelectorRequirement{all[0], all[2], all[4]}},
		{"guaranteed", guaranteed, []corev1.ScopedResourceSelectorRequirement{all[1], all[3]}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.MatchingScopes(tt.pod, all)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scopes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServiceUsage: upstream's TestServiceEvaluatorUsage rows.
func TestServiceUsage(t *testing.T) {
	ports := []corev1.ServicePort{{Port: 27443}, {Port: 27444, NodePort: 32001}}
	for _, tt := range []struct {
		name string
		spec corev1.ServiceSpec
		want corev1.ResourceList
	}{
		{"clusterip", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports},
			list("services", "1", "count/services", "1", "services.nodeports", "0", "services.loadbalancers", "0")},
		{"nodeports", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports},
			list("services", "1", "count/services", "1", "services.nodeports", "2", "services.loadbalancers", "0")},
		{"loadbalancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports},
			list("services", "1", "count/services", "1", "services.nodeports", "2", "services.loadbalancers", "1")},
		{"loadbalancer without node ports", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: ports, AllocateLoadBalancerNodePorts: ptr.To(false)},
			list("services", "1", "count/services", "1", "services.nodeports", "1", "services.loadbalancers", "1")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newServiceEvaluator(nil).Usage(&corev1.Service{Spec: tt.spec})
			if err != nil {
				t.Fatal(err)
			}
			sameUsage(t, got, tt.want)
		})
	}
}

// TestClaimUsage: upstream's TestPersistentVolumeClaimEvaluatorUsage
// rows: storage rounded up, and counted per storage class too.
func TestClaimUsage(t *testing.T) {
	claim := func(class *string, storage string, allocated string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class,
			Resources: corev1.VolumeResourceRequirements{Requests: list("storage", storage)}}}
		if allocated != "" {
			c.Status.AllocatedResources = list("storage", allocated)
		}
		return c
	}
	gold := "gold.storageclass.storage.k8s.io/"
	for _, tt := range []struct {
		name  string
		claim *corev1.PersistentVolumeClaim
		want  corev1.ResourceList
	}{
		{"no class", claim(nil, "10Gi", ""), list("requests.storage", "10Gi", "persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1")},
		{"gold", claim(ptr.To("gold"), "10Gi", ""), list("requests.storage", "10Gi", gold+"requests.storage", "10Gi",
			"persistentvolumeclaims", "1", gold+"persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1")},
		{"rounded up", claim(nil, "1m", ""), list("requests.storage", "1", "persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1")},
		{"allocated more", claim(nil, "10Gi", "12Gi"), list("requests.storage", "12Gi", "persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newClaimEvaluator(nil).Usage(tt.claim)
			if err != nil {
				t.Fatal(err)
			}
			sameUsage(t, got, tt.want)
		})
	}
}
