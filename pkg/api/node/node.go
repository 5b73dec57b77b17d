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

// Package node holds kube-apiserver's warnings of deprecated node labels
// in selectors (a port of k8s.io/kubernetes' pkg/api/node to the v1
// types), which pods, persistent volumes, storage classes, storage
// capacities and runtime classes share. It is a leaf: it imports nothing
// of this module.
package node

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var deprecatedLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

// DeprecatedLabel returns the message of a deprecated node label, and
// whether key is one.
func DeprecatedLabel(key string) (string, bool) {
	msg, ok := deprecatedLabels[key]
	return msg, ok
}

// SelectorTermWarnings returns the warnings of a node selector term at
// path: deprecated label keys and, with checkValues, values that are no
// label values.
func SelectorTermWarnings(term corev1.NodeSelectorTerm, checkValues bool, path *field.Path) []string {
	var warnings []string
	for i, e := range term.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		if msg, ok := deprecatedLabels[e.Key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s is %s", p.Child("key"), e.Key, msg))
		}
		if !checkValues {
			continue
		}
		for j, value := range e.Values {
			for _, msg := range validation.IsValidLabelValue(value) {
				warnings = append(warnings, fmt.Sprintf("%s: %s is invalid, %s", p.Child("values").Index(j), value, msg))
			}
		}
	}
	return warnings
}

// LabelSelectorWarnings returns the warnings of the deprecated node
// labels a label selector at path uses (upstream's GetWarningsForNodeSelector).
func LabelSelectorWarnings(selector *metav1.LabelSelector, path *field.Path) []string {
	if selector == nil {
		return nil
	}
	var warnings []string
	for i, e := range selector.MatchExpressions {
		if msg, ok := deprecatedLabels[e.Key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s is %s", path.Child("matchExpressions").Index(i).Child("key"), e.Key, msg))
		}
	}
	for _, label := range slices.Sorted(maps.Keys(selector.MatchLabels)) {
		if msg, ok := deprecatedLabels[label]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s", path.Child("matchLabels").Child(label), msg))
		}
	}
	return warnings
}
