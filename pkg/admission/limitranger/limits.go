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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// setDefaults is upstream's PodMutateLimitFunc: each container (and init
// container) gets the Container items' defaultRequest and default (limit)
// of each resource it names none of, and the Pod an annotation saying so.
func setDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			requests[k] = v.DeepCopy()
		}
		for k, v := range item.Default {
			limits[k] = v.DeepCopy()
		}
	}
	var notes []string
	for i := range pod.Spec.Containers {
		notes = mergeDefaults(&pod.Spec.Containers[i], requests, limits, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = mergeDefaults(&pod.Spec.InitContainers[i], requests, limits, "init container", notes)
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

// mergeDefaults sets c's missing requests and limits and appends to notes
// what it set, as upstream words it.
func mergeDefaults(c *corev1.Container, requests, limits corev1.ResourceList, prefix string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	fill := func(have, defaults corev1.ResourceList) []string {
		var set []string
		for k, v := range defaults {
			if _, ok := have[k]; !ok {
				have[k] = v.DeepCopy()
				set = append(set, string(k))
			}
		}
		slices.Sort(set)
		return set
	}
	if set := fill(c.Resources.Requests, requests); len(set) > 0 {
		notes = append(notes, strings.Join(set, ", ")+fmt.Sprintf(" request for %s %s", prefix, c.Name))
	}
	if set := fill(c.Resources.Limits, limits); len(set) > 0 {
		notes = append(notes, strings.Join(set, ", ")+fmt.Sprintf(" limit for %s %s", prefix, c.Name))
	}
	return notes
}

// validatePod is upstream's PodValidateLimitFunc: Container items bound
// each container and init container, Pod items the Pod's totals.
func validatePod(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for _, c := range cs {
					errs = append(errs, bound(item, c.Resources.Requests, c.Resources.Limits)...)
				}
			}
		case corev1.LimitTypePod:
			errs = append(errs, bound(item, podTotal(pod, requestsOf), podTotal(pod, limitsOf))...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// bound checks requests and limits against item's min, max and
// maxLimitRequestRatio. Upstream ranges over each map in Go's random
// order; the resources are taken here in sorted order, one of the orders
// upstream's messages come in.
func bound(item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	var errs []error
	t := string(item.Type)
	for _, k := range sortedNames(item.Min) {
		errs = appendErr(errs, minConstraint(t, string(k), item.Min[k], requests, limits))
	}
	for _, k := range sortedNames(item.Max) {
		errs = appendErr(errs, maxConstraint(t, string(k), item.Max[k], requests, limits))
	}
	for _, k := range sortedNames(item.MaxLimitRequestRatio) {
		errs = appendErr(errs, ratioConstraint(t, string(k), item.MaxLimitRequestRatio[k], requests, limits))
	}
	return errs
}

// validateClaim is upstream's PersistentVolumeClaimValidateLimitFunc:
// only a claim's requests count (its limits are not user input).
func validateClaim(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		t := string(item.Type)
		for _, k := range sortedNames(item.Min) {
			errs = appendErr(errs, minConstraint(t, string(k), item.Min[k], pvc.Spec.Resources.Requests, corev1.ResourceList{}))
		}
		for _, k := range sortedNames(item.Max) {
			errs = appendErr(errs, maxRequestConstraint(t, string(k), item.Max[k], pvc.Spec.Resources.Requests))
		}
	}
	return utilerrors.NewAggregate(errs)
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// enforcedValues returns the three quantities at a common precision:
// milli-units unless one would overflow them.
func enforcedValues(request, limit, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := request.Value(), limit.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return request.MilliValue(), limit.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqExists := requests[corev1.ResourceName(name)]
	lim, limExists := limits[corev1.ResourceName(name)]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !reqExists:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	case limExists && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	return nil
}

// maxRequestConstraint is the max of a type whose limits are not
// recognized (a claim's): it bounds the request.
func maxRequestConstraint(limitType, name string, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, reqExists := requests[corev1.ResourceName(name)]
	r, _, e := enforcedValues(req, resource.Quantity{}, enforced)
	switch {
	case !reqExists:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func maxConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqExists := requests[corev1.ResourceName(name)]
	lim, limExists := limits[corev1.ResourceName(name)]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !limExists:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, limitType, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	case reqExists && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(limitType, name string, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqExists := requests[corev1.ResourceName(name)]
	lim, limExists := limits[corev1.ResourceName(name)]
	r, l, _ := enforcedValues(req, lim, enforced)
	if !reqExists || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, limitType, enforced.String())
	}
	if !limExists || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, limitType, enforced.String())
	}
	ratio := float64(l) / float64(r)
	shown, maxRatio := ratio, float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		ratio, maxRatio = ratio*1000, float64(enforced.MilliValue())
	}
	if ratio > maxRatio {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, limitType, enforced.String(), shown)
	}
	return nil
}
