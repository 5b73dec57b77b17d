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

package poddisruptionbudget

import (
	"slices"
	"strconv"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

var supportedEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

// validateSpec is upstream's ValidatePodDisruptionBudgetSpec.
func validateSpec(spec *policyv1.PodDisruptionBudgetSpec, allowInvalidLabelValue bool) field.ErrorList {
	p := field.NewPath("spec")
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(p, registry.Internal(*spec), "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		errs = append(errs, validateIntOrPercent(*spec.MinAvailable, p.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		errs = append(errs, validateIntOrPercent(*spec.MaxUnavailable, p.Child("maxUnavailable"))...)
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, opts, p.Child("selector"))...)
	if policy := spec.UnhealthyPodEvictionPolicy; policy != nil && !slices.Contains(supportedEvictionPolicies, string(*policy)) {
		errs = append(errs, field.NotSupported(p.Child("unhealthyPodEvictionPolicy"), *policy, supportedEvictionPolicies))
	}
	return errs
}

// validateIntOrPercent is upstream's ValidatePositiveIntOrPercent and
// IsNotMoreThan100Percent: a non-negative integer or a percentage up to 100%.
func validateIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.String:
		if msgs := validation.IsValidPercent(v.StrVal); len(msgs) > 0 {
			var errs field.ErrorList
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(p, v, msg))
			}
			return errs
		}
		if pct, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); pct > 100 {
			return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
		}
		return nil
	case intstr.Int:
		return apimachineryvalidation.ValidateNonnegativeField(int64(v.IntValue()), p)
	default:
		return field.ErrorList{field.Invalid(p, v, "must be an integer or percentage (e.g '5%%')")}
	}
}

// validateStatus is upstream's ValidatePodDisruptionBudgetStatusUpdate for policy/v1.
func validateStatus(status *policyv1.PodDisruptionBudgetStatus) field.ErrorList {
	p := field.NewPath("status")
	errs := metav1validation.ValidateConditions(status.Conditions, p.Child("conditions"))
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"disruptionsAllowed", status.DisruptionsAllowed}, {"currentHealthy", status.CurrentHealthy},
		{"desiredHealthy", status.DesiredHealthy}, {"expectedPods", status.ExpectedPods},
	} {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(f.value), p.Child(f.name))...)
	}
	return errs
}
