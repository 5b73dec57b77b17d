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
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/utils/clock"
)

var resourceClaimsResource = resourcev1.SchemeGroupVersion.WithResource("resourceclaims")

// resourceClaimObjectCountName is count/resourceclaims.resource.k8s.io,
// which this evaluator counts as upstream's does.
var resourceClaimObjectCountName = generic.ObjectCountQuotaResourceNameFor(resourceClaimsResource.GroupResource())

// deviceClassResource is upstream's V1ResourceByDeviceClass:
// gpu -> gpu.deviceclass.resource.k8s.io/devices.
func deviceClassResource(className string) corev1.ResourceName {
	return corev1.ResourceName(className + corev1.ResourceClaimsPerClass)
}

// resourceClaimEvaluator is upstream's ResourceClaim evaluator, with
// DRAExtendedResource on (GA and locked on in 1.37): a claim's devices,
// per device class, in the worst case of its requests, and as the
// extended resources of their classes, less what the pod that owns the
// claim (one the scheduler made for its extended resources) already
// counts. Admins are not exempt, as upstream's.
type resourceClaimEvaluator struct {
	list  generic.ListFuncByNamespace
	x     *ExtendedResources // nil: no class maps to an extended resource, no pod is found
	clock clock.Clock
}

var _ quota.Evaluator = (*resourceClaimEvaluator)(nil)

func newResourceClaimEvaluator(f quota.ListerForResourceFunc, x *ExtendedResources, c clock.Clock) *resourceClaimEvaluator {
	return &resourceClaimEvaluator{list: generic.ListResourceUsingListerFunc(f, resourceClaimsResource), x: x, clock: c}
}

func (e *resourceClaimEvaluator) GroupResource() schema.GroupResource {
	return resourceClaimsResource.GroupResource()
}

func (e *resourceClaimEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Handles: creates and updates of the claim itself, not its status.
func (e *resourceClaimEvaluator) Handles(a admission.Attributes) bool {
	op := a.GetOperation()
	return a.GetSubresource() == "" && (op == admission.Create || op == admission.Update)
}

func (e *resourceClaimEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, e.MatchingResources, generic.MatchesNoScopeFunc)
}

func (e *resourceClaimEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (e *resourceClaimEvaluator) UncoveredQuotaScopes(_, _ []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

// MatchingResources: the object count, <class>.deviceclass.resource.k8s.io/devices,
// and, for a device class that exists, requests.deviceclass.resource.kubernetes.io/<class>
// and requests.<its extended resource>.
func (e *resourceClaimEvaluator) MatchingResources(items []corev1.ResourceName) []corev1.ResourceName {
	result := []corev1.ResourceName{}
	for _, item := range items {
		if item == resourceClaimObjectCountName || strings.HasSuffix(string(item), corev1.ResourceClaimsPerClass) {
			result = append(result, item)
			continue
		}
		if className, ok := strings.CutPrefix(string(item), corev1.ResourceImplicitExtendedClaimsPerClass); ok {
			if e.x.extendedResource(className) != "" {
				result = append(result, item)
				continue
			}
		}
		if isExtendedResourceNameForQuota(item) {
			if e.x.deviceClass(corev1.ResourceName(item[len(corev1.DefaultResourceRequestsPrefix):])) != nil {
				result = append(result, item)
			}
		}
	}
	return result
}

// Usage is upstream's: one claim, and the devices of each request, the
// most any of a request's subrequests may get (all of a class: the most
// an allocation may hold); an unknown allocation mode counts none.
func (e *resourceClaimEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	result := corev1.ResourceList{}
	claim, ok := item.(*resourcev1.ResourceClaim)
	if !ok {
		// Upstream's message, naming its internal type too.
		return result, fmt.Errorf("expect *v1.ResourceClaim or *resource.ResourceClaim, got %v", item)
	}
	result[resourceClaimObjectCountName] = *resource.NewQuantity(1, resource.DecimalSI)
	for _, request := range claim.Spec.Devices.Requests {
		switch {
		case len(request.FirstAvailable) > 0:
			most := map[corev1.ResourceName]resource.Quantity{}
			for _, sub := range request.FirstAvailable {
				name := deviceClassResource(sub.DeviceClassName)
				q := resource.NewQuantity(devices(sub.AllocationMode, sub.Count), resource.DecimalSI)
				if q.Cmp(most[name]) > 0 {
					most[name] = *q
				}
			}
			for name, q := range most {
				sum := result[name]
				sum.Add(q)
				result[name] = sum
			}
		case request.Exactly != nil:
			name := deviceClassResource(request.Exactly.DeviceClassName)
			sum := result[name]
			sum.Add(*resource.NewQuantity(devices(request.Exactly.AllocationMode, request.Exactly.Count), resource.DecimalSI))
			result[name] = sum
		}
	}
	e.addExtendedResources(result, e.x.podUsage(claim, e.clock))
	return result, nil
}

// devices is the most a request of mode may get.
func devices(mode resourcev1.DeviceAllocationMode, count int64) int64 {
	switch mode {
	case resourcev1.DeviceAllocationModeExactCount:
		return count
	case resourcev1.DeviceAllocationModeAll:
		return resourcev1.AllocationResultsMaxSize
	}
	return 0
}

// addExtendedResources is upstream's addExtendedResourceQuota: each
// class's devices as requests.deviceclass.resource.kubernetes.io/<class>
// and requests.<the class's extended resource>, less what the owning
// pod's usage already holds of them.
func (e *resourceClaimEvaluator) addExtendedResources(usage, podUsage corev1.ResourceList) {
	extended := corev1.ResourceList{}
	for name, q := range usage {
		className, ok := strings.CutSuffix(string(name), corev1.ResourceClaimsPerClass)
		if !ok || className == "" {
			continue
		}
		extended[corev1.ResourceName(corev1.ResourceImplicitExtendedClaimsPerClass+className)] = q
		if r := e.x.extendedResource(className); r != "" {
			extended[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+r)] = q
		}
	}
	for name, q := range extended {
		if p, ok := podUsage[name]; ok {
			q.Sub(p)
		}
		if q.CmpInt64(0) > 0 {
			usage[name] = q
		}
	}
}

func (e *resourceClaimEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, e.list, generic.MatchesNoScopeFunc, e.Usage)
}
