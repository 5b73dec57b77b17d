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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
)

// validateAffinity is upstream's validateAffinity for a new pod (invalid
// label values refused; upstream lets an update keep those its old spec
// had). matchLabelKeys and mismatchLabelKeys are not checked.
func validateAffinity(a *corev1.Affinity, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := path.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			errs = append(errs, node.ValidateSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		for i, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(term.Weight, tp)...)
			errs = append(errs, node.ValidateSelectorTerm(term.Preference, true, tp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, validatePodAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, path.Child("podAntiAffinity"))...)
	}
	return errs
}

func validatePodAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, term := range required {
		errs = append(errs, validatePodAffinityTerm(term, path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, term := range preferred {
		p := path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, validateWeight(term.Weight, p)...)
		errs = append(errs, validatePodAffinityTerm(term.PodAffinityTerm, p.Child("podAffinityTerm"))...)
	}
	return errs
}

func validateWeight(weight int32, path *field.Path) field.ErrorList {
	if weight <= 0 || weight > 100 {
		return field.ErrorList{field.Invalid(path.Child("weight"), weight, "must be in the range 1-100")}
	}
	return nil
}

// validatePodAffinityTerm is upstream's: its selectors, namespaces and
// topology key.
func validatePodAffinityTerm(term corev1.PodAffinityTerm, path *field.Path) field.ErrorList {
	var opts metav1validation.LabelSelectorValidationOptions
	errs := metav1validation.ValidateLabelSelector(term.LabelSelector, opts, path.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, path.Child("namespaceSelector"))...)
	for _, ns := range term.Namespaces {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(path.Child("namespace"), ns, msg))
		}
	}
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(path.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(term.TopologyKey, path.Child("topologyKey"))...)
}

// validateSchedulingGates is upstream's: qualified names, no duplicates.
func validateSchedulingGates(gates []corev1.PodSchedulingGate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, g := range gates {
		for _, msg := range validation.IsQualifiedName(g.Name) {
			errs = append(errs, field.Invalid(path.Index(i), g.Name, msg))
		}
		if seen.Has(g.Name) {
			errs = append(errs, field.Duplicate(path.Index(i), g.Name))
		}
		seen.Insert(g.Name)
	}
	return errs
}

// validateTopologySpreadConstraints is upstream's, but for matchLabelKeys:
// a positive skew, a topology key, a known action, each key and action
// once, minDomains only to not schedule, known node policies, a valid
// selector.
func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	actions := []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
	policies := []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}
	for i, c := range constraints {
		p := path.Index(i)
		errs = append(errs, positive(int64(c.MaxSkew), p.Child("maxSkew"))...)
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if !slices.Contains(actions, c.WhenUnsatisfiable) {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, actions))
		}
		if slices.ContainsFunc(constraints[i+1:], func(o corev1.TopologySpreadConstraint) bool {
			return o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable
		}) {
			errs = append(errs, field.Duplicate(p.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
		}
		if m := c.MinDomains; m != nil {
			errs = append(errs, positive(int64(*m), p.Child("minDomains"))...)
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), m, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, np := range []struct {
			name   string
			policy *corev1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if np.policy != nil && !slices.Contains(policies, *np.policy) {
				errs = append(errs, field.NotSupported(p.Child(np.name), np.policy, policies))
			}
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	return errs
}

// positive is upstream's ValidatePositiveField.
func positive(value int64, p *field.Path) field.ErrorList {
	if value <= 0 {
		return field.ErrorList{field.Invalid(p, value, "must be greater than zero")}
	}
	return nil
}
