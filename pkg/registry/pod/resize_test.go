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
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/api/qos"
)

func resources(cpu, memory string) corev1.ResourceRequirements {
	list := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
}

// guaranteedPod is validPod with every container's cpu and memory limited
// at what it requests.
func guaranteedPod() *corev1.Pod {
	return modified(validPod(), func(p *corev1.Pod) {
		p.Generation = 1
		for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range cs {
				cs[i].Resources = resources("100m", "64Mi")
			}
		}
		p.Status.QOSClass = corev1.PodQOSGuaranteed
	})
}

// TestResizeChangesOnlyResources: pods/resize takes containers' and init
// containers' cpu and memory and drops every other change.
func TestResizeChangesOnlyResources(t *testing.T) {
	p := newPods(t)
	stored := p.seed(t, guaranteedPod())
	got, err := updateThrough(t, p.resize, stored, func(pod *corev1.Pod) {
		pod.Spec.Containers[0].Resources = resources("500m", "256Mi")
		pod.Spec.InitContainers[0].Resources = resources("200m", "64Mi")
		pod.Spec.Containers[0].Image = "nginx:1.26"
		pod.Spec.ActiveDeadlineSeconds = new(int64(60))
	})
	if err != nil {
		t.Fatalf("resize: got error %v, want none", err)
	}
	if cpu := got.Spec.Containers[0].Resources.Limits.Cpu().String(); cpu != "500m" {
		t.Errorf("app's cpu limit: got %s, want 500m", cpu)
	}
	if cpu := got.Spec.InitContainers[0].Resources.Requests.Cpu().String(); cpu != "200m" {
		t.Errorf("init's cpu request: got %s, want 200m", cpu)
	}
	if img := got.Spec.Containers[0].Image; img != "nginx:1.25" {
		t.Errorf("image: got %q, want the stored nginx:1.25", img)
	}
	if got.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("activeDeadlineSeconds: got %d, want unset", *got.Spec.ActiveDeadlineSeconds)
	}
	if got.Generation != 2 {
		t.Errorf("generation: got %d, want 2", got.Generation)
	}
}

// TestResizeValidation: what upstream's ValidatePodResize refuses, each
// error as upstream words it.
func TestResizeValidation(t *testing.T) {
	tests := []struct {
		name   string
		stored func(*corev1.Pod)
		mutate func(*corev1.Pod)
		want   string
	}{
		{name: "a changed QoS class", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1")
		}, want: `spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`},
		{name: "removed requests", mutate: func(p *corev1.Pod) {
			delete(p.Spec.Containers[1].Resources.Requests, corev1.ResourceMemory)
			delete(p.Spec.Containers[1].Resources.Limits, corev1.ResourceMemory)
		}, want: `spec.containers[1].resources.requests: Forbidden: resource requests cannot be removed`},
		{name: "another resource", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, want: `spec: Forbidden: only cpu and memory resources are mutable`},
		{name: "a resize policy", mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
		}, want: `spec: Forbidden: only cpu and memory resources are mutable`},
		{name: "an init container's other resource", mutate: func(p *corev1.Pod) {
			p.Spec.InitContainers[0].Resources.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, want: `spec.initContainers[0]: Forbidden: only cpu and memory resources for init or sidecar containers are mutable`},
		{name: "an added container", mutate: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "more", Image: "busybox:1", Resources: resources("100m", "64Mi")})
		}, want: `spec.containers: Forbidden: containers may not be added or removed on resize`},
		{name: "a renamed container", mutate: func(p *corev1.Pod) { p.Spec.Containers[1].Name = "proxy" },
			want: `spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize`},
		{name: "a node that cannot resize", stored: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
		}, mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("200m", "64Mi") },
			want: `spec: Forbidden: Pod running on node without support for resize`},
		{name: "removed pod-level resources", stored: func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}, mutate: func(p *corev1.Pod) { delete(p.Spec.Resources.Limits, corev1.ResourceCPU) },
			want: `spec.resources.limits: Forbidden: pod-level resource limits cannot be removed`},
		{name: "a static pod", stored: func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		}, mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Resources = resources("200m", "128Mi") },
			want: `: Forbidden: static pods cannot be resized`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPods(t)
			pod := guaranteedPod()
			if tt.stored != nil {
				tt.stored(pod)
			}
			_, err := updateThrough(t, p.resize, p.seed(t, pod), tt.mutate)
			wantInvalid(t, err, tt.want)
		})
	}
}

// TestQOSAsUpstream: the status.qosClass a created pod gets, as upstream's
// ComputePodQOS, after upstream's defaults: only cpu and memory count;
// requests default to limits.
func TestQOSAsUpstream(t *testing.T) {
	storage := corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	tests := []struct {
		name string
		r    []corev1.ResourceRequirements
		pod  *corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{name: "nothing", r: []corev1.ResourceRequirements{{}, {}}, want: corev1.PodQOSBestEffort},
		{name: "ephemeral storage only", r: []corev1.ResourceRequirements{{Requests: storage}, {}}, want: corev1.PodQOSBestEffort},
		{name: "all limited", r: []corev1.ResourceRequirements{resources("1", "1Gi"), resources("2", "1Gi")}, want: corev1.PodQOSGuaranteed},
		{name: "limits only, requests defaulted", r: []corev1.ResourceRequirements{{Limits: resources("1", "1Gi").Limits}, {Limits: resources("1", "1Gi").Limits}}, want: corev1.PodQOSGuaranteed},
		{name: "one limited, one not", r: []corev1.ResourceRequirements{resources("1", "1Gi"), {}}, want: corev1.PodQOSBurstable},
		{name: "cpu only", r: []corev1.ResourceRequirements{{Limits: cpu}, {Limits: cpu}}, want: corev1.PodQOSBurstable},
		{name: "a memory limit defaults its request", r: []corev1.ResourceRequirements{
			{Requests: cpu, Limits: resources("1", "1Gi").Limits}, resources("1", "1Gi"),
		}, want: corev1.PodQOSGuaranteed},
		{name: "pod-level resources", r: []corev1.ResourceRequirements{{}, {}}, pod: &corev1.ResourceRequirements{Limits: resources("1", "1Gi").Limits}, want: corev1.PodQOSBurstable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := modified(validPod(), func(p *corev1.Pod) {
				p.Spec.InitContainers = nil
				p.Spec.Resources = tt.pod
				for i := range p.Spec.Containers {
					p.Spec.Containers[i].Resources = *tt.r[i].DeepCopy()
				}
			})
			api.Scheme.Default(pod)
			if got := qos.ComputePodQOS(pod); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
