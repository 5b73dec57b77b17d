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
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// This file is upstream's handling of pod-level resources (spec.resources,
// the PodLevelResources gate, on by default): their defaults, set as a
// pod is created or resized (PodLevelResourcesFixDefaulting), and their
// validation.

// defaultPodLevelResources is upstream's DefaultPodLevelResources: where
// the pod sets some resources, huge page limits its containers set become
// the pod's, requests default to the containers' (where they may be
// overcommitted) or else to the pod's limit, and a request's limit to the
// larger of it and the containers' limits, where every container has one.
func defaultPodLevelResources(p *corev1.Pod) {
	r := p.Spec.Resources
	if r == nil || len(r.Requests)+len(r.Limits) == 0 {
		return
	}
	containers := &corev1.Pod{Spec: corev1.PodSpec{Containers: p.Spec.Containers, InitContainers: p.Spec.InitContainers}}
	set := func(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q.DeepCopy()
	}
	for name, q := range resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{}) {
		_, requested := r.Requests[name]
		if _, limited := r.Limits[name]; isHugePages(name) && !requested && !limited {
			set(&r.Limits, name, q)
		}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(containers, resourcehelper.PodResourcesOptions{}) {
		if _, ok := r.Requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && resourcequota.IsOvercommitAllowed(name) {
			set(&r.Requests, name, q)
		}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			set(&r.Requests, name, q)
		}
	}
	candidates := sets.New[corev1.ResourceName]()
	for name := range r.Requests {
		if _, ok := r.Limits[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			candidates.Insert(name)
		}
	}
	visitContainers(&p.Spec, nil, func(c *corev1.Container, _ *field.Path) {
		for name := range candidates {
			if _, ok := c.Resources.Limits[name]; !ok {
				candidates.Delete(name)
			}
		}
	})
	if candidates.Len() == 0 {
		return
	}
	limits := resourcehelper.AggregateContainerLimits(containers, resourcehelper.PodResourcesOptions{})
	for name := range candidates {
		if q, ok := limits[name]; ok {
			if req := r.Requests[name]; req.Cmp(q) > 0 {
				q = req
			}
			set(&r.Limits, name, q)
		}
	}
}

// validatePodResources is upstream's validatePodResources: resources set
// for the whole pod are not for a Windows pod nor claims, name what the
// pod level supports, and hold its containers' requests and limits.
func validatePodResources(spec *corev1.PodSpec, claims sets.Set[string], p *field.Path) field.ErrorList {
	if spec.Resources == nil {
		return nil
	}
	p = p.Child("resources")
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(p, "may not be set for a windows pod")}
	}
	var errs field.ErrorList
	if spec.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(p.Child("claims"), "claims may not be set for Resources at pod-level"))
	}
	errs = append(errs, validateResources(spec.Resources, podResourceName, claims, p)...)
	return append(errs, validatePodResourceConsistency(spec, p)...)
}

// podResourceName is upstream's validatePodResourceName.
func podResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	if errs := resourcequota.ValidateResourceName(name, p); len(errs) > 0 {
		return errs
	}
	if !resourcehelper.IsSupportedPodLevelResource(name) {
		return field.ErrorList{field.NotSupported(p, name, sets.List(resourcehelper.SupportedPodLevelResources()))}
	}
	return nil
}

// validatePodResourceConsistency is upstream's: the pod's requests at
// least its containers' together, its huge page limits at least theirs
// together, and each container's limit at most the pod's (resource names
// sorted; upstream's order is a map's).
func validatePodResourceConsistency(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	pod := &corev1.Pod{Spec: *spec}
	requests := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		if q, own, ok := exceeds(requests, spec.Resources.Requests, name); ok {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), own, "must be greater than or equal to aggregate container requests of "+q))
		}
	}
	limits := resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		if q, own, ok := exceeds(limits, spec.Resources.Limits, name); ok && isHugePages(name) {
			errs = append(errs, field.Invalid(p.Child("limits").Key(string(name)), own, "must be greater than or equal to aggregate container limits of "+q))
		}
	}
	for i, c := range spec.Containers {
		for _, name := range slices.Sorted(maps.Keys(c.Resources.Limits)) {
			if q, own, ok := exceeds(c.Resources.Limits, spec.Resources.Limits, name); ok {
				errs = append(errs, field.Invalid(p.Child("containers").Index(i).Key(string(name)).Child("limits"), q, "must be less than or equal to pod limits of "+own))
			}
		}
	}
	return errs
}

// exceeds is whether list's quantity of name exceeds bound's, where bound
// has one, and the two as strings.
func exceeds(list, bound corev1.ResourceList, name corev1.ResourceName) (q, b string, ok bool) {
	limit, bounded := bound[name]
	have := list[name]
	return have.String(), limit.String(), bounded && have.Cmp(limit) > 0
}
