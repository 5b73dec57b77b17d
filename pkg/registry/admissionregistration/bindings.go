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

package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"
)

var supportedValidationActions = []string{string(admissionregistrationv1.Audit), string(admissionregistrationv1.Deny), string(admissionregistrationv1.Warn)}

// validateBinding is upstream's validate*AdmissionPolicyBindingSpec, less
// the validation actions a validating binding also has. declared: the
// policyName is required by a declarative rule too (a validating binding's).
func validateBinding(policyName string, declared bool, paramRef *admissionregistrationv1.ParamRef, match *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policyName == "" {
		err := field.Required(p.Child("policyName"), "")
		if declared {
			err = err.MarkCoveredByDeclarative()
		}
		errs = append(errs, err)
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(policyName, false) {
			errs = append(errs, field.Invalid(p.Child("policyName"), policyName, msg))
		}
	}
	errs = append(errs, validateParamRef(paramRef, p.Child("paramRef"))...)
	return append(errs, validateMatchResources(match, p.Child("matchResources"))...)
}

// validateValidationActions is upstream's: at least one, no duplicates,
// and not both Deny and Warn.
func validateValidationActions(actions []admissionregistrationv1.ValidationAction, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[admissionregistrationv1.ValidationAction]()
	for i, action := range actions {
		if !slices.Contains(supportedValidationActions, string(action)) {
			errs = append(errs, field.NotSupported(p.Index(i), action, supportedValidationActions))
		}
		if seen.Has(action) {
			errs = append(errs, field.Duplicate(p.Index(i), action))
		}
		seen.Insert(action)
	}
	if seen.Has(admissionregistrationv1.Deny) && seen.Has(admissionregistrationv1.Warn) {
		errs = append(errs, field.Invalid(p, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(p, "at least one validation action is required").MarkCoveredByDeclarative())
	}
	return errs
}

// declarativeBindingErrors are the errors of the rules declared on a
// validating binding's v1 spec (beta), as its generated
// Validate_ValidatingAdmissionPolicyBindingSpec reports them (old nil on
// create): policyName and validationActions required, neither checked
// again where an update leaves it as it was.
func declarativeBindingErrors(spec, old *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) field.ErrorList {
	if old != nil && apiequality.Semantic.DeepEqual(spec, old) {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec")
	if spec.PolicyName == "" && (old == nil || old.PolicyName != "") {
		errs = append(errs, field.Required(p.Child("policyName"), ""))
	}
	if len(spec.ValidationActions) == 0 && (old == nil || !apiequality.Semantic.DeepEqual(spec.ValidationActions, old.ValidationActions)) {
		errs = append(errs, field.Required(p.Child("validationActions"), ""))
	}
	return errs
}

// validateParamRef is upstream's: one of name and selector, and a parameterNotFoundAction.
func validateParamRef(ref *admissionregistrationv1.ParamRef, p *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	var errs field.ErrorList
	if ref.Name != "" {
		for _, msg := range content.IsPathSegmentName(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
		if ref.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if ref.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(ref.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
		if ref.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if ref.Name == "" && ref.Selector == nil {
		errs = append(errs, field.Required(p, `one of name or selector must be specified`))
	}
	switch action := ref.ParameterNotFoundAction; {
	case action == nil || *action == "":
		errs = append(errs, field.Required(p.Child("parameterNotFoundAction"), ""))
	case *action != admissionregistrationv1.DenyAction && *action != admissionregistrationv1.AllowAction:
		errs = append(errs, field.NotSupported(p.Child("parameterNotFoundAction"), action,
			[]string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return errs
}

// validateMatchResources is upstream's: after defaulting, a matchPolicy and
// both selectors (validated strictly, as the type is newer than issue
// #99139), and valid rules.
func validateMatchResources(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else if !slices.Contains(supportedMatchPolicies, string(*m.MatchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *m.MatchPolicy, supportedMatchPolicies))
	}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(p.Child("objectSelector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(m.ObjectSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], p.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

// validateNamedRule is upstream's validateNamedRuleWithOperations: unique
// path-segment resource names, then the rule.
func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, name := range r.ResourceNames {
		for _, msg := range content.IsPathSegmentName(name) {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), name, msg))
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(p.Child("resourceNames").Index(i), name))
		}
		names.Insert(name)
	}
	return append(errs, validateRuleWithOperations(&r.RuleWithOperations, p)...)
}

// validateFieldRef is upstream's: a JSONPath, nothing more (for easier upgrades and rollbacks).
func validateFieldRef(fieldRef string, p *field.Path) field.ErrorList {
	fieldRef = strings.TrimSpace(fieldRef)
	if fieldRef == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if err := jsonpath.New("spec").Parse(fmt.Sprintf("{%s}", fieldRef)); err != nil {
		return field.ErrorList{field.Invalid(p, fieldRef, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}
