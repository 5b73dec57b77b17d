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

// Package qos is upstream's pod QoS class (k8s.io/kubernetes
// pkg/apis/core/v1/helper/qos), for the pod registry and the quota
// admission plugin: a leaf, so that plugins need not import the scheme.
package qos

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// GetPodQOS is upstream's: the pod's recorded class, else computed.
func GetPodQOS(p *corev1.Pod) corev1.PodQOSClass {
	if p.Status.QOSClass != "" {
		return p.Status.QOSClass
	}
	return ComputePodQOS(p)
}

// ComputePodQOS is upstream's (kube-apiserver 1.37's gates): the class of
// the pod-level resources when they are set, else the classes of the init
// and regular containers combined: Burstable if any container is, or if
// they differ.
func ComputePodQOS(p *corev1.Pod) corev1.PodQOSClass {
	if resourcehelper.IsPodLevelResourcesSet(p) {
		return requirementsQOS(p.Spec.Resources)
	}
	var qos corev1.PodQOSClass
	for _, containers := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range containers {
			switch c := requirementsQOS(&containers[i].Resources); {
			case c == corev1.PodQOSBurstable:
				return c
			case qos == "":
				qos = c
			case qos != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

// requirementsQOS: BestEffort with no cpu or memory asked for, Guaranteed
// with both limited at what they request, else Burstable.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, limit := r.Requests[name], r.Limits[name]
		c := corev1.PodQOSGuaranteed
		switch {
		case !req.Equal(limit):
			return corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		}
		if qos != "" && qos != c {
			return corev1.PodQOSBurstable
		}
		qos = c
	}
	return qos
}
