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

package rbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Upstream's validation of the RBAC types, less the metadata, on a create
// (old nil) or an update, with what its declarative validation changes at
// kube-apiserver 1.37's defaults (DeclarativeValidationBeta on): where a
// create sets, or an update changes, a list of rules or of subjects, or a
// create sets a roleRef, the rules declared on the v1 types report missing
// verbs and names, with no detail, after all other errors, in place of the
// handwritten errors they cover.

func validateRole(role, old *rbacv1.Role) field.ErrorList {
	changed := old == nil || !apiequality.Semantic.DeepEqual(role.Rules, old.Rules)
	return registry.WithDeclarative(validateRules(role.Rules, true), declarativeRules(role.Rules, changed))
}

// validateClusterRole is upstream's ValidateClusterRole; an update may keep
// selector values that are no label values if the stored role had any.
func validateClusterRole(role, old *rbacv1.ClusterRole) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: old != nil && hasInvalidSelector(old.AggregationRule)}
	errs := append(validateRules(role.Rules, false), validateAggregationRule(role.AggregationRule, opts)...)
	changed := old == nil || !apiequality.Semantic.DeepEqual(role.Rules, old.Rules)
	return registry.WithDeclarative(errs, declarativeRules(role.Rules, changed))
}

func validateRoleBinding(b, old *rbacv1.RoleBinding) field.ErrorList {
	var o *binding
	if old != nil {
		o = &binding{old.RoleRef, old.Subjects}
	}
	return binding{b.RoleRef, b.Subjects}.validate(o, true)
}

func validateClusterRoleBinding(b, old *rbacv1.ClusterRoleBinding) field.ErrorList {
	var o *binding
	if old != nil {
		o = &binding{old.RoleRef, old.Subjects}
	}
	return binding{b.RoleRef, b.Subjects}.validate(o, false)
}

// validateRules checks policy rules as upstream's ValidatePolicyRule.
func validateRules(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range rules {
		p := field.NewPath("rules").Index(i)
		if len(rule.Verbs) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value").MarkCoveredByDeclarative())
		}
		if len(rule.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(rule.APIGroups) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(rule.Resources) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// declarativeRules are the declarative errors of rules a create sets or
// an update changes: the missing verbs.
func declarativeRules(rules []rbacv1.PolicyRule, changed bool) field.ErrorList {
	var errs field.ErrorList
	for i, rule := range rules {
		if changed && len(rule.Verbs) == 0 {
			errs = append(errs, field.Required(field.NewPath("rules").Index(i).Child("verbs"), ""))
		}
	}
	return errs
}

// validateAggregationRule is upstream's; the value of a selector that
// does not parse is its parse result, nil.
func validateAggregationRule(rule *rbacv1.AggregationRule, opts metav1validation.LabelSelectorValidationOptions) field.ErrorList {
	if rule == nil {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("aggregationRule", "clusterRoleSelectors")
	if len(rule.ClusterRoleSelectors) == 0 {
		errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	for i := range rule.ClusterRoleSelectors {
		selector := &rule.ClusterRoleSelectors[i]
		errs = append(errs, metav1validation.ValidateLabelSelector(selector, opts, p.Index(i))...)
		if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
			errs = append(errs, field.Invalid(p.Index(i), nil, "invalid label selector."))
		}
	}
	return errs
}

// hasInvalidSelector reports whether a stored aggregation rule has a
// selector that would not validate now.
func hasInvalidSelector(rule *rbacv1.AggregationRule) bool {
	if rule == nil {
		return false
	}
	for i := range rule.ClusterRoleSelectors {
		if len(metav1validation.ValidateLabelSelector(&rule.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
			return true
		}
	}
	return false
}

// binding is what role bindings and cluster role bindings share.
type binding struct {
	roleRef  rbacv1.RoleRef
	subjects []rbacv1.Subject
}

// validate checks the role reference and subjects of a binding: a
// RoleBinding may refer to a Role or a ClusterRole, a ClusterRoleBinding
// only to a ClusterRole, whose service accounts then need a namespace.
// old is the stored binding of an update.
func (b binding) validate(old *binding, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	ref, rp := b.roleRef, field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(rp.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !slices.Contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), "").MarkCoveredByDeclarative())
	} else {
		for _, msg := range path.ValidatePathSegmentName(ref.Name, false) {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range b.subjects {
		errs = append(errs, validateSubject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	if old != nil {
		errs = append(errs, validateRoleRefUpdate(ref, old.roleRef)...)
	}
	return registry.WithDeclarative(errs, b.declarative(old))
}

// declarative are a binding's declarative errors: the subjects' missing
// names where a create sets or an update changes them, and the roleRef's
// on create (on update, a changed roleRef is only immutable).
func (b binding) declarative(old *binding) field.ErrorList {
	var errs field.ErrorList
	if old == nil || !apiequality.Semantic.DeepEqual(b.subjects, old.subjects) {
		for i, s := range b.subjects {
			if s.Name == "" {
				errs = append(errs, field.Required(field.NewPath("subjects").Index(i).Child("name"), ""))
			}
		}
	}
	if old == nil && b.roleRef.Name == "" {
		errs = append(errs, field.Required(field.NewPath("roleRef", "name"), ""))
	}
	return errs
}

func validateSubject(s rbacv1.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "").MarkCoveredByDeclarative())
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(s.Name, false) {
				errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

// validateRoleRefUpdate forbids changing what a binding grants, with
// upstream's error: its value is upstream's internal RoleRef, whose fields
// have no JSON names.
func validateRoleRefUpdate(ref, old rbacv1.RoleRef) field.ErrorList {
	if ref == old {
		return nil
	}
	internal := struct{ APIGroup, Kind, Name string }{ref.APIGroup, ref.Kind, ref.Name}
	return field.ErrorList{field.Invalid(field.NewPath("roleRef"), internal, apimachineryvalidation.FieldImmutableErrorMsg).WithOrigin("immutable").MarkCoveredByDeclarative()}
}
