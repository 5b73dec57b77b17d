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

package node

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSelector is k8s.io/kubernetes' ValidateNodeSelector, as pods'
// required node affinity and persistent volumes' node affinity use it: at
// least one term, each valid.
func ValidateSelector(s *corev1.NodeSelector, path *field.Path) field.ErrorList {
	termsPath := path.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termsPath, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, term := range s.NodeSelectorTerms {
		errs = append(errs, ValidateSelectorTerm(term, false, termsPath.Index(i))...)
	}
	return errs
}

// ValidateSelectorTerm is upstream's ValidateNodeSelectorTerm: its label
// requirements (their values not checked if anyValues) and its field
// requirements (metadata.name only).
func ValidateSelectorTerm(term corev1.NodeSelectorTerm, anyValues bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, req := range term.MatchExpressions {
		errs = append(errs, validateRequirement(req, anyValues, path.Child("matchExpressions").Index(i))...)
	}
	for i, req := range term.MatchFields {
		errs = append(errs, validateFieldRequirement(req, path.Child("matchFields").Index(i))...)
	}
	return errs
}

// validateRequirement is upstream's ValidateNodeSelectorRequirement.
func validateRequirement(req corev1.NodeSelectorRequirement, anyValues bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) == 0 {
			errs = append(errs, field.Required(path.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(req.Values) > 0 {
			errs = append(errs, field.Forbidden(path.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(req.Values) != 1 {
			errs = append(errs, field.Required(path.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	errs = append(errs, metav1validation.ValidateLabelName(req.Key, path.Child("key"))...)
	if !anyValues {
		for i, v := range req.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(path.Child("values").Index(i), v, msg).WithOrigin("format=k8s-label-value"))
			}
		}
	}
	return errs
}

// validateFieldRequirement is upstream's ValidateNodeFieldSelectorRequirement.
func validateFieldRequirement(req corev1.NodeSelectorRequirement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(req.Values) != 1 {
			errs = append(errs, field.Required(path.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("operator"), req.Operator, "not a valid selector operator"))
	}
	if req.Key != metav1.ObjectNameField {
		return append(errs, field.Invalid(path.Child("key"), req.Key, "not a valid field selector key"))
	}
	for i, v := range req.Values {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(v, false) {
			errs = append(errs, field.Invalid(path.Child("values").Index(i), v, msg))
		}
	}
	return errs
}
