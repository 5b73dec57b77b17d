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

package limitranger

import (
	corev1 "k8s.io/api/core/v1"
)

func requestsOf(r *corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }
func limitsOf(r *corev1.ResourceRequirements) corev1.ResourceList   { return r.Limits }

// podTotal is upstream's podRequests and podLimits (of the spec, not of
// the status), which of by picks: the containers' sum, plus sidecars
// (restartable init containers), or the greatest init container (with the
// sidecars started before it) if greater; then the Pod-level resources
// (cpu and memory) in place of the sum. PodLevelResources is on by
// default in kube-apiserver 1.37, and the Pod registry here keeps
// spec.resources, so it is taken as on.
func podTotal(pod *corev1.Pod, of func(*corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addResources(total, of(&pod.Spec.Containers[i].Resources))
	}
	sidecars, inits := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		own := of(&c.Resources)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(total, own)
			addResources(sidecars, own)
			own = sidecars
		} else {
			tmp := corev1.ResourceList{}
			addResources(tmp, own)
			addResources(tmp, sidecars)
			own = tmp
		}
		maxResources(inits, own)
	}
	maxResources(total, inits)
	if pod.Spec.Resources != nil {
		for name, q := range of(pod.Spec.Resources) {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
				total[name] = q
			}
		}
	}
	return total
}

// addResources adds add to list.
func addResources(list, add corev1.ResourceList) {
	for name, q := range add {
		if v, ok := list[name]; ok {
			v.Add(q)
			list[name] = v
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

// maxResources sets each resource of list to the greater of it and other's.
func maxResources(list, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
