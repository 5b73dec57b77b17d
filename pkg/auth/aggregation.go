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

package auth

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AggregatedRules returns the rules of the aggregated ClusterRole role: the
// rules of the roles (of candidates, but role itself) that its selectors
// match, by name, first rule first, each rule once, as
// kube-controller-manager's clusterrole-aggregation controller computes them.
func AggregatedRules(role *rbacv1.ClusterRole, candidates []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	if role.AggregationRule == nil {
		return rules, nil
	}
	sorted := slices.SortedFunc(slices.Values(candidates), func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	for i := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		for _, c := range sorted {
			if c.Name == role.Name || !selector.Matches(labels.Set(c.Labels)) {
				continue
			}
			for _, rule := range c.Rules {
				if !slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, rule) }) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules, nil
}
