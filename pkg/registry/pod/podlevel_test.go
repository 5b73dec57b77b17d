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

package pod

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestDefaultPodLevelResources: a pod created with some pod-level
// resources gets the rest as upstream's DefaultPodLevelResources sets
// them (requests from the containers' or the pod's limits, limits where
// every container has one, huge page limits from the containers'), before
// its QoS class is computed; a pod without them is left alone.
func TestDefaultPodLevelResources(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	for _, tt := range []struct {
		name                    string
		pod, init, app, sidecar corev1.ResourceRequirements
		want                    *corev1.ResourceRequirements
		wantQOS                 corev1.PodQOSClass
		podResourcesAreUnset    bool
	}{
		{name: "none", podResourcesAreUnset: true, want: nil, wantQOS: corev1.PodQOSBestEffort},
		{name: "requests from the containers' requests, or the pod's limits",
			pod: corev1.ResourceRequirements{Limits: list("cpu", "2", "memory", "1Gi")}, app: corev1.ResourceRequirements{Requests: list("cpu", "500m")},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "500m", "memory", "1Gi"), Limits: list("cpu", "2", "memory", "1Gi")}, wantQOS: corev1.PodQOSBurstable},
		{name: "limits where every container has one: the larger of theirs and the request",
			pod: corev1.ResourceRequirements{Requests: list("cpu", "4", "memory", "1Gi")}, init: corev1.ResourceRequirements{Limits: list("cpu", "1")},
			app: corev1.ResourceRequirements{Limits: list("cpu", "1", "memory", "1Gi")}, sidecar: corev1.ResourceRequirements{Limits: list("cpu", "2")},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "4", "memory", "1Gi"), Limits: list("cpu", "4")}, wantQOS: corev1.PodQOSBurstable},
		{name: "no limit where a container has none",
			pod: corev1.ResourceRequirements{Requests: list("cpu", "1")}, app: corev1.ResourceRequirements{Limits: list("cpu", "1")},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "1")}, wantQOS: corev1.PodQOSBurstable},
		{name: "the containers' limits where over the request",
			pod: corev1.ResourceRequirements{Requests: list("cpu", "1")}, init: corev1.ResourceRequirements{Limits: list("cpu", "1")},
			app: corev1.ResourceRequirements{Limits: list("cpu", "1")}, sidecar: corev1.ResourceRequirements{Limits: list("cpu", "2")},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "1"), Limits: list("cpu", "3")}, wantQOS: corev1.PodQOSBurstable},
		{name: "huge page limits from the containers', and requests from them",
			pod: corev1.ResourceRequirements{Requests: list("memory", "1Gi"), Limits: list("memory", "1Gi")},
			app: corev1.ResourceRequirements{Limits: list("hugepages-2Mi", "4Mi")}, sidecar: corev1.ResourceRequirements{Limits: list("hugepages-2Mi", "4Mi")},
			want: &corev1.ResourceRequirements{Requests: list("memory", "1Gi", "hugepages-2Mi", "8Mi"), Limits: list("memory", "1Gi", "hugepages-2Mi", "8Mi")}, wantQOS: corev1.PodQOSBurstable},
		{name: "guaranteed once defaulted",
			pod:  corev1.ResourceRequirements{Limits: list("cpu", "1", "memory", "1Gi")},
			want: &corev1.ResourceRequirements{Requests: list("cpu", "1", "memory", "1Gi"), Limits: list("cpu", "1", "memory", "1Gi")}, wantQOS: corev1.PodQOSGuaranteed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := modified(validPod(), func(p *corev1.Pod) {
				if !tt.podResourcesAreUnset {
					p.Spec.Resources = &tt.pod
				}
				p.Spec.InitContainers[0].Resources, p.Spec.Containers[0].Resources, p.Spec.Containers[1].Resources = tt.init, tt.app, tt.sidecar
			})
			newPods(t).store.CreateStrategy.PrepareForCreate(context.Background(), p)
			if diff := cmp.Diff(tt.want, p.Spec.Resources); diff != "" {
				t.Errorf("pod-level resources (-want +got):\n%s", diff)
			}
			if p.Status.QOSClass != tt.wantQOS {
				t.Errorf("QoS class: got %s, want %s", p.Status.QOSClass, tt.wantQOS)
			}
		})
	}
}
