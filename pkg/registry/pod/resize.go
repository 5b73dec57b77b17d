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
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/qos"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// resizeStrategy is upstream's podResizeStrategy (kube-apiserver 1.37's
// gates: init containers resizable, pod-level resources resizable, volumes
// not): an update keeps all of the stored pod but its containers' and init
// containers' resources and resize policies, and the pod-level resources.
func resizeStrategy(base registry.Strategy) registry.Strategy {
	s := base
	s.OnUpdate = func(obj, old runtime.Object) {
		p, oldP := obj.(*corev1.Pod), old.(*corev1.Pod)
		// Added, removed, reordered or renamed containers are left for
		// the validation to refuse.
		if len(p.Spec.Containers) == len(oldP.Spec.Containers) && len(p.Spec.InitContainers) == len(oldP.Spec.InitContainers) {
			resources := p.Spec.Resources
			if resources == nil && oldP.Spec.Resources != nil { // a client unaware of pod-level resources
				resources = oldP.Spec.Resources.DeepCopy()
			}
			containers := resized(p.Spec.Containers, oldP.Spec.Containers)
			initContainers := resized(p.Spec.InitContainers, oldP.Spec.InitContainers)
			keepAllBut(p, oldP)
			p.Spec.Resources, p.Spec.Containers, p.Spec.InitContainers = resources, containers, initContainers
		}
		defaultPodLevelResources(p)
		DropDisabledFields(&p.Spec, &oldP.Spec)
		countGeneration(p, oldP)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateResize(obj.(*corev1.Pod), old.(*corev1.Pod))
	}
	return s
}

// resized returns the old containers with the new ones' resources and
// resize policies, or the new ones when a name differs.
func resized(containers, old []corev1.Container) []corev1.Container {
	if len(containers) == 0 {
		return containers
	}
	merged := append([]corev1.Container(nil), old...)
	for i, c := range containers {
		if c.Name != old[i].Name {
			return containers
		}
		merged[i].Resources, merged[i].ResizePolicy = c.Resources, c.ResizePolicy
	}
	return merged
}

// validateResize is upstream's ValidatePodResize for a pod whose other
// changes resizeStrategy dropped.
func validateResize(p, old *corev1.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := ValidatePodSpec(&p.Spec, specPath)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	if qos.GetPodQOS(old) != qos.ComputePodQOS(p) {
		errs = append(errs, field.Invalid(specPath, p.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(old) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	masked := *p.Spec.DeepCopy() // the new spec with cpu and memory changes undone
	if hasPodLevelResources(old) || hasPodLevelResources(p) {
		errs = append(errs, validatePodLevelResize(p, old, &masked, specPath)...)
	}
	if order := validateResizeOrder(p, old, specPath); order != nil {
		return append(errs, order...)
	}
	for i := range old.Spec.InitContainers {
		errs = append(errs, validateContainerResize(&p.Spec.InitContainers[i].Resources, &old.Spec.InitContainers[i].Resources, specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		errs = append(errs, validateContainerResize(&p.Spec.Containers[i].Resources, &old.Spec.Containers[i].Resources, specPath.Child("containers").Index(i).Child("resources"))...)
	}
	for i := range masked.Containers {
		c := &masked.Containers[i]
		undoCPUMemory(c, &old.Spec.Containers[i])
		if !apiequality.Semantic.DeepEqual(*c, old.Spec.Containers[i]) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range masked.InitContainers {
		c, was := &masked.InitContainers[i], &old.Spec.InitContainers[i]
		modified := !apiequality.Semantic.DeepEqual(*c, *was)
		undoCPUMemory(c, was)
		if !apiequality.Semantic.DeepEqual(*c, *was) {
			errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if modified && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
			for _, policy := range c.ResizePolicy {
				if policy.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	if !apiequality.Semantic.DeepEqual(p.Spec.Volumes, old.Spec.Volumes) {
		errs = append(errs, field.Forbidden(specPath.Child("volumes"), "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(errs) == 0 && !apiequality.Semantic.DeepEqual(masked, old.Spec) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return errs
}

func hasPodLevelResources(p *corev1.Pod) bool {
	return p.Spec.Resources != nil && len(p.Spec.Resources.Requests)+len(p.Spec.Resources.Limits) > 0
}

// resizeSupported is upstream's isPodResizeRequestSupported: a pod whose
// running containers report no resources runs on a node that cannot resize.
func resizeSupported(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

// validatePodLevelResize checks a resize of the pod-level resources, and
// undoes their cpu and memory changes in masked.
func validatePodLevelResize(p, old *corev1.Pod, masked *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if old.Spec.Resources != nil {
		if p.Spec.Resources == nil {
			return field.ErrorList{field.Forbidden(specPath.Child("resources"), "pod-level resources cannot be removed")}
		}
		if removed(p.Spec.Resources.Requests, old.Spec.Resources.Requests) {
			errs = append(errs, field.Forbidden(specPath.Child("resources", "requests"), "pod-level resource requests cannot be removed"))
		}
		if removed(p.Spec.Resources.Limits, old.Spec.Resources.Limits) {
			errs = append(errs, field.Forbidden(specPath.Child("resources", "limits"), "pod-level resource limits cannot be removed"))
		}
	}
	if r := masked.Resources; r != nil {
		var was corev1.ResourceRequirements
		if old.Spec.Resources != nil {
			was = *old.Spec.Resources
		}
		r.Requests, r.Limits = undoCPUMemoryOf(r.Requests, was.Requests), undoCPUMemoryOf(r.Limits, was.Limits)
		if old.Spec.Resources == nil && len(r.Requests)+len(r.Limits)+len(r.Claims) == 0 {
			masked.Resources = nil
		}
	}
	if !apiequality.Semantic.DeepEqual(masked.Resources, old.Spec.Resources) {
		errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable at pod-level"))
	}
	return errs
}

// validateResizeOrder refuses added, removed, renamed or reordered containers.
func validateResizeOrder(p, old *corev1.Pod, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, kind := range []struct {
		name     string
		now, was []corev1.Container
	}{{"containers", p.Spec.Containers, old.Spec.Containers}, {"initContainers", p.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(kind.now) != len(kind.was) {
			errs = append(errs, field.Forbidden(specPath.Child(kind.name), kind.name+" may not be added or removed on resize"))
			continue
		}
		for i, c := range kind.was {
			if kind.now[i].Name != c.Name {
				errs = append(errs, field.Forbidden(specPath.Child(kind.name).Index(i).Child("name"), kind.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateContainerResize refuses removed requests or limits.
func validateContainerResize(now, was *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if removed(now.Requests, was.Requests) {
		errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
	}
	if removed(now.Limits, was.Limits) {
		errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

func removed(now, was corev1.ResourceList) bool {
	for name := range was {
		if _, ok := now[name]; !ok {
			return true
		}
	}
	return false
}

// undoCPUMemory gives c the cpu and memory requests and limits of was,
// keeping its claims.
func undoCPUMemory(c, was *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   undoCPUMemoryOf(c.Resources.Limits, was.Resources.Limits),
		Requests: undoCPUMemoryOf(c.Resources.Requests, was.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}

func undoCPUMemoryOf(list, was corev1.ResourceList) corev1.ResourceList {
	if list == nil && was == nil {
		return nil
	}
	undone := corev1.ResourceList{}
	for name, q := range list {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			undone[name] = q.DeepCopy()
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := was[name]; ok {
			undone[name] = q
		}
	}
	return undone
}
