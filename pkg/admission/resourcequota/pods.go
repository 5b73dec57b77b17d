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
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/clock"
)

var podObjectCountName = generic.ObjectCountQuotaResourceNameFor(corev1.Resource("pods"))

// podResources are the resources a pod's quota tracks, as upstream's.
var podResources = []corev1.ResourceName{
	podObjectCountName,
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
	corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	corev1.ResourcePods,
}

var podResourcePrefixes = []string{corev1.ResourceHugePagesPrefix, corev1.ResourceRequestsHugePagesPrefix}

// validationSet: a quota of one of these makes every container name it,
// upstream's "mistake" kept for compatibility.
var validationSet = sets.New(
	corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU,
	corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory)

type podEvaluator struct {
	list  generic.ListFuncByNamespace
	clock clock.Clock
}

var _ quota.Evaluator = (*podEvaluator)(nil)

func newPodEvaluator(f quota.ListerForResourceFunc, c clock.Clock) *podEvaluator {
	return &podEvaluator{list: generic.ListResourceUsingListerFunc(f, corev1.SchemeGroupVersion.WithResource("pods")), clock: c}
}

func (p *podEvaluator) GroupResource() schema.GroupResource { return corev1.Resource("pods") }

// Constraints requires each container to name the cpu and memory
// resources the quota tracks, unless the pod sets pod-level resources
// (PodLevelResources is on by default in 1.37).
func (p *podEvaluator) Constraints(required []corev1.ResourceName, item runtime.Object) error {
	pod, ok := item.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("expect *api.Pod or *v1.Pod, got %v", item)
	}
	if resourcehelper.IsPodLevelResourcesSet(pod) {
		return nil
	}
	requiredSet := sets.New(required...).Intersection(validationSet)
	missing := map[corev1.ResourceName]sets.Set[string]{}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			has := sets.KeySet(computeUsage(c.Resources.Requests, c.Resources.Limits))
			for _, r := range requiredSet.Difference(has).UnsortedList() {
				if missing[r] == nil {
					missing[r] = sets.New[string]()
				}
				missing[r].Insert(c.Name)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range slices.Sorted(func(yield func(corev1.ResourceName) bool) {
		for r := range missing {
			if !yield(r) {
				return
			}
		}
	}) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(sets.List(missing[r]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// Handles: creates, updates that change whether the pod is terminating
// (a scope), and resizes.
func (p *podEvaluator) Handles(a admission.Attributes) bool {
	op := a.GetOperation()
	switch a.GetSubresource() {
	case "":
		if op == admission.Update {
			pod, ok1 := a.GetObject().(*corev1.Pod)
			old, ok2 := a.GetOldObject().(*corev1.Pod)
			if !ok1 || !ok2 {
				return false
			}
			if isTerminating(old) != isTerminating(pod) {
				return true
			}
		}
		return op == admission.Create
	case "resize":
		return op == admission.Update
	}
	return false
}

func (p *podEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, p.MatchingResources, podMatchesScope)
}

func (p *podEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	result := quota.Intersection(input, podResources)
	for _, r := range input {
		if quota.ContainsPrefix(podResourcePrefixes, r) || isExtendedResourceNameForQuota(r) {
			result = append(result, r)
		}
	}
	return result
}

func (p *podEvaluator) MatchingScopes(item runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return matchingScopes(item, selectors, podMatchesScope)
}

func (p *podEvaluator) UncoveredQuotaScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return uncoveredScopes(limited, matched), nil
}

// matchingScopes are the selectors item matches, as matches says (upstream's
// MatchingScopes of pods and claims).
func matchingScopes(item runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement,
	matches func(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error)) ([]corev1.ScopedResourceSelectorRequirement, error) {
	matched := []corev1.ScopedResourceSelectorRequirement{}
	for _, s := range selectors {
		ok, err := matches(s, item)
		if err != nil {
			return []corev1.ScopedResourceSelectorRequirement{}, fmt.Errorf("error on matching scope %v: %w", s, err)
		}
		if ok {
			matched = append(matched, s)
		}
	}
	return matched, nil
}

// uncoveredScopes are those of limited that no scope of matched names.
func uncoveredScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	uncovered := []corev1.ScopedResourceSelectorRequirement{}
	for _, s := range limited {
		if !slices.ContainsFunc(matched, func(m corev1.ScopedResourceSelectorRequirement) bool { return m.ScopeName == s.ScopeName }) {
			uncovered = append(uncovered, s)
		}
	}
	return uncovered
}

// Usage is upstream's PodUsageFunc: a pod always counts as an object
// (count/pods); its compute resources and "pods" only until it ends or
// outlives its deletion grace period.
func (p *podEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	pod, ok := item.(*corev1.Pod)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *api.Pod or *v1.Pod, got %v", item)
	}
	result := corev1.ResourceList{podObjectCountName: *resource.NewQuantity(1, resource.DecimalSI)}
	if !chargeable(pod, p.clock) {
		return result, nil
	}
	// InPlacePodVerticalScaling is GA, PodLevelResources on, in 1.37.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	return quota.Add(result, computeUsage(resourcehelper.PodRequests(pod, opts), resourcehelper.PodLimits(pod, opts))), nil
}

func (p *podEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, p.list, podMatchesScope, p.Usage)
}

// computeUsage is upstream's podComputeUsageHelper.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}
	for _, r := range []struct{ name, request, limit corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.name]; ok {
			result[r.name], result[r.request] = q, q
		}
		if q, ok := limits[r.name]; ok {
			result[r.limit] = q
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			result[name] = q
			result[corev1.DefaultResourceRequestsPrefix+name] = q
		}
		if isExtendedResourceName(name) || strings.HasPrefix(string(name), resourcev1.ResourceDeviceClassPrefix) {
			result[corev1.DefaultResourceRequestsPrefix+name] = q
		}
	}
	return result
}

// isNativeResource: unprefixed, or prefixed kubernetes.io/.
func isNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// isExtendedResourceName is upstream's v1 helper's: a fully-qualified
// name outside kubernetes.io/, not requests.-prefixed, valid as a quota
// resource name.
func isExtendedResourceName(name corev1.ResourceName) bool {
	if isNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isExtendedResourceNameForQuota: requests.<an extended resource>, or
// requests.deviceclass.resource.kubernetes.io/<class>.
func isExtendedResourceNameForQuota(name corev1.ResourceName) bool {
	implicit := strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix+resourcev1.ResourceDeviceClassPrefix)
	return (!isNativeResource(name) || implicit) && strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
}

func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// chargeable is upstream's QuotaV1Pod: not ended, and not past its
// deletion grace period (a pod stuck terminating on a lost node).
func chargeable(pod *corev1.Pod, c clock.Clock) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if c.Now().After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

// PodReleases is upstream's update filter for pods: whether the update
// from old to pod may change what it uses (its container resources in
// status, its terminating scope, or its end).
func PodReleases(old, pod *corev1.Pod, c clock.Clock) bool {
	changed := func(olds, news []corev1.ContainerStatus) bool {
		for _, o := range olds {
			for _, n := range news {
				if n.Name == o.Name && !equality.Semantic.DeepEqual(o.Resources, n.Resources) {
					return true
				}
			}
		}
		return false
	}
	if changed(old.Status.ContainerStatuses, pod.Status.ContainerStatuses) || changed(old.Status.InitContainerStatuses, pod.Status.InitContainerStatuses) {
		return true
	}
	if isTerminating(old) != isTerminating(pod) {
		return true
	}
	return chargeable(old, c) && !chargeable(pod, c)
}
