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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

var serviceObjectCountName = generic.ObjectCountQuotaResourceNameFor(corev1.Resource("services"))

var serviceResources = []corev1.ResourceName{
	serviceObjectCountName, corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
}

// serviceEvaluator is upstream's: services, their node ports and load
// balancers, on create and update (a type change changes them).
type serviceEvaluator struct {
	list generic.ListFuncByNamespace
}

var _ quota.Evaluator = (*serviceEvaluator)(nil)

func newServiceEvaluator(f quota.ListerForResourceFunc) *serviceEvaluator {
	return &serviceEvaluator{list: generic.ListResourceUsingListerFunc(f, corev1.SchemeGroupVersion.WithResource("services"))}
}

func (s *serviceEvaluator) GroupResource() schema.GroupResource                     { return corev1.Resource("services") }
func (s *serviceEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (s *serviceEvaluator) Handles(a admission.Attributes) bool {
	return a.GetSubresource() == "" && (a.GetOperation() == admission.Create || a.GetOperation() == admission.Update)
}

func (s *serviceEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, s.MatchingResources, generic.MatchesNoScopeFunc)
}

func (s *serviceEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, serviceResources)
}

func (s *serviceEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (s *serviceEvaluator) UncoveredQuotaScopes(_, _ []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

// Usage: a NodePort service uses a node port per port, a LoadBalancer
// one too unless it allocates none (then those it has).
func (s *serviceEvaluator) Usage(item runtime.Object) (corev1.ResourceList, error) {
	svc, ok := item.(*corev1.Service)
	if !ok {
		return corev1.ResourceList{}, fmt.Errorf("expect *api.Service or *v1.Service, got %v", item)
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	ports := *resource.NewQuantity(int64(len(svc.Spec.Ports)), resource.DecimalSI)
	result := corev1.ResourceList{
		serviceObjectCountName: one, corev1.ResourceServices: one,
		corev1.ResourceServicesLoadBalancers: {Format: resource.DecimalSI}, corev1.ResourceServicesNodePorts: {Format: resource.DecimalSI},
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = ports
	case corev1.ServiceTypeLoadBalancer:
		if a := svc.Spec.AllocateLoadBalancerNodePorts; a != nil && !*a {
			n := 0
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					n++
				}
			}
			ports = *resource.NewQuantity(int64(n), resource.DecimalSI)
		}
		result[corev1.ResourceServicesNodePorts] = ports
		result[corev1.ResourceServicesLoadBalancers] = one
	}
	return result, nil
}

func (s *serviceEvaluator) UsageStats(options quota.UsageStatsOptions) (quota.UsageStats, error) {
	return generic.CalculateUsageStats(options, s.list, generic.MatchesNoScopeFunc, s.Usage)
}
