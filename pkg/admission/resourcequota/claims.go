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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

var claimObjectCountName = generic.ObjectCountQuotaResourceNameFor(corev1.Resource("persistentvolumeclaims"))

var claimResources = []corev1.ResourceName{corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage}

const storageClassSuffix = ".storageclass.storage.k8s.io/"

// claimEvaluator is upstream's pvcEvaluator, with VolumeAttributesClass
// and RecoverVolumeExpansionFailure on (both GA in 1.37): claims and
// their storage, in all and per storage class, scoped by volume
// attributes class.
type claimEvaluator struct {
	list generic.ListFuncByNamespace
}

var _ quota.Evaluator = (*claimEvaluator)(nil)

func newClaimEvaluator(f quota.ListerForResourceFunc) *claimEvaluator {
	return &claimEvaluator{list: generic.ListResourceUsingListerFunc(f, corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"))}
}

func (c *claimEvaluator) GroupResource() schema.GroupResource {
	return corev1.Resource("persistentvolumeclaims")
}
func (c *claimEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

// Handles: creates, updates and status updates.
func (c *claimEvaluator) Handles(a admission.Attributes) bool {
	op := a.GetOperation()
	switch a.GetSubresource() {
	case "":
		return op == admission.Create || op == admission.Update
	case "status":
		// Upstream's RequiresQuotaReplenish compares the allocated storage
		// as two *Quantity, fresh copies that always differ: every status
		// update of a claim is handled.
		_, ok1 := a.GetObject().(*corev1.PersistentVolumeClaim)
		_, ok2 := a.GetOldObject().(*corev1.PersistentVolumeClaim)
		return ok1 && ok2
	}
	return false
}

func (c *claimEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, c.MatchingResources, claimMatchesScope)
}

func (c *claimEvaluator) MatchingScopes(item runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return matchingScopes(item, selectors, claimMatchesScope)
}

func (c *claimEvaluator) UncoveredQuotaScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return uncoveredScopes(limited, matched), nil
}

func (c *claimEvaluator) MatchingResources(items []corev1.ResourceName) []corev1.ResourceName {
	result := []corev1.ResourceName{}
	for _, item := range items {
		if item == claimObjectCountName || quota.Contains(claimResources, item) {
			result = append(result, item)
			continue
		}
		for _, r := range claimResources {
			if strings.HasSuffix(string(item), storageClassSuffix+string(r)) {
				result = append(result, item)
				break
			}
		}
	}
	return result
}

func (c *claimEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	claim, ok := item.(*corev1.PersistentVolumeClaim)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *api.PersistentVolumeClaim or *v1.PersistentVolumeClaim, got %v", item)
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	result := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one, claimObjectCountName: one}
	class := storagehelpers.GetPersistentVolumeClaimClass(claim)
	if class != "" {
		result[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one
	}
	if storage := storageUsage(claim); storage != nil {
		result[corev1.ResourceRequestsStorage] = *storage
		if class != "" {
			result[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = *storage
		}
	}
	return result, nil
}

// storageUsage is the storage requested, rounded up to a whole unit, or
// what is allocated if more.
func storageUsage(claim *corev1.PersistentVolumeClaim) *resource.Quantity {
	roundUp := func(q resource.Quantity) *resource.Quantity {
		r := q.DeepCopy()
		r.RoundUp(0)
		return &r
	}
	requested, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return nil
	}
	result := roundUp(requested)
	if allocated, ok := claim.Status.AllocatedResources[corev1.ResourceStorage]; ok && allocated.Cmp(*result) > 0 {
		result = roundUp(allocated)
	}
	return result
}

func (c *claimEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, c.list, claimMatchesScope, c.Usage)
}

func claimMatchesScope(s corev1.ScopedResourceSelectorRequirement, item runtime.Object) (bool, error) {
	claim, ok := item.(*corev1.PersistentVolumeClaim)
	if !ok {
		return false, fmt.Errorf("expect *api.PersistentVolumeClaim or *v1.PersistentVolumeClaim, got %v", item)
	}
	if s.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	names := attributesClasses(claim)
	if s.Operator == corev1.ScopeSelectorOpExists {
		return len(names) != 0, nil
	}
	if len(names) == 0 {
		return selectorMatches(s, labels.Set{})
	}
	for name := range names {
		ok, err := selectorMatches(s, labels.Set{string(corev1.ResourceQuotaScopeVolumeAttributesClass): name})
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// attributesClasses are the volume attributes classes claim names: in
// its spec, its status, and a modification under way.
func attributesClasses(claim *corev1.PersistentVolumeClaim) sets.Set[string] {
	names := sets.New[string]()
	for _, n := range []string{ptr.Deref(claim.Spec.VolumeAttributesClassName, ""), ptr.Deref(claim.Status.CurrentVolumeAttributesClassName, "")} {
		if n != "" {
			names.Insert(n)
		}
	}
	if m := claim.Status.ModifyVolumeStatus; m != nil && m.TargetVolumeAttributesClassName != "" {
		names.Insert(m.TargetVolumeAttributesClassName)
	}
	return names
}
