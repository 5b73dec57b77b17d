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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
)

// validateAffinity is upstream's validateAffinity for a new pod (invalid
// label values refused; upstream lets an update keep those its old spec
// had).
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
	errs = append(errs, validateLabelKeys(path, term.MatchLabelKeys, term.MismatchLabelKeys, term.LabelSelector)...)
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

// validateTopologySpreadConstraints is upstream's (MatchLabelKeysInPodTopologySpreadSelectorMerge
// on): a positive skew, a topology key, a known action, each key and action
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
		errs = append(errs, validateLabelKeys(p, c.MatchLabelKeys, nil, c.LabelSelector)...)
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

// validateLabelKeys is upstream's ValidateMatchLabelKeysAndMismatchLabelKeys:
// label names, only beside a selector; a match key neither in the
// selector twice (once merged on create) nor a mismatch key.
func validateLabelKeys(path *field.Path, match, mismatch []string, selector *metav1.LabelSelector) field.ErrorList {
	var errs field.ErrorList
	for _, keys := range []struct {
		name string
		keys []string
	}{{"matchLabelKeys", match}, {"mismatchLabelKeys", mismatch}} {
		switch {
		case len(keys.keys) == 0:
		case selector == nil:
			errs = append(errs, field.Forbidden(path.Child(keys.name), "must not be specified when labelSelector is not set"))
		default:
			for i, key := range keys.keys {
				errs = append(errs, metav1validation.ValidateLabelName(key, path.Child(keys.name).Index(i))...)
			}
		}
	}
	if selector != nil {
		seen := sets.KeySet(selector.MatchLabels)
		for _, e := range selector.MatchExpressions {
			// upstream's index: the key's last in matchLabelKeys, on path itself
			if i := lastIndex(match, e.Key); i >= 0 && seen.Has(e.Key) {
				errs = append(errs, field.Invalid(path.Index(i), e.Key, "exists in both matchLabelKeys and labelSelector"))
			}
			seen.Insert(e.Key)
		}
	}
	for i, key := range match {
		if slices.Contains(mismatch, key) {
			errs = append(errs, field.Invalid(path.Child("matchLabelKeys").Index(i), key, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return errs
}

func lastIndex(keys []string, key string) int {
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i] == key {
			return i
		}
	}
	return -1
}

// mergeLabelKeys is upstream's mutatePodAffinity and
// mutateTopologySpreadConstraints, on a pod's create: the values of the
// pod's labels that matchLabelKeys (In) and mismatchLabelKeys (NotIn) name
// added to their terms' selectors.
func mergeLabelKeys(p *corev1.Pod) {
	merge := func(selector *metav1.LabelSelector, match, mismatch []string) {
		if selector == nil {
			return
		}
		for _, k := range []struct {
			keys []string
			op   metav1.LabelSelectorOperator
		}{{match, metav1.LabelSelectorOpIn}, {mismatch, metav1.LabelSelectorOpNotIn}} {
			for _, key := range k.keys {
				if value, ok := p.Labels[key]; ok {
					selector.MatchExpressions = append(selector.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: k.op, Values: []string{value}})
				}
			}
		}
	}
	terms := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
		for i := range preferred {
			t := &preferred[i].PodAffinityTerm
			merge(t.LabelSelector, t.MatchLabelKeys, t.MismatchLabelKeys)
		}
		for i := range required {
			merge(required[i].LabelSelector, required[i].MatchLabelKeys, required[i].MismatchLabelKeys)
		}
	}
	if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil {
		terms(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		terms(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	for i := range p.Spec.TopologySpreadConstraints {
		c := &p.Spec.TopologySpreadConstraints[i]
		merge(c.LabelSelector, c.MatchLabelKeys, nil)
	}
}
