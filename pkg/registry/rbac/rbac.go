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
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of roles, clusterroles, rolebindings and
// clusterrolebindings, stored and validated; WithEscalationChecks adds
// upstream's escalation checks.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	resources := []registry.Resource{
		{
			Resource: rbacv1.Resource("roles"),
			Singular: "role",
			New:      func() runtime.Object { return &rbacv1.Role{} },
			NewList:  func() runtime.Object { return &rbacv1.RoleList{} },
			Strategy: strategy(true, func(obj runtime.Object) field.ErrorList {
				return validateRules(obj.(*rbacv1.Role).Rules, true)
			}, nil),
			Table: roleTable,
		},
		{
			Resource: rbacv1.Resource("clusterroles"),
			Singular: "clusterrole",
			New:      func() runtime.Object { return &rbacv1.ClusterRole{} },
			NewList:  func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			Strategy: strategy(false, func(obj runtime.Object) field.ErrorList {
				role := obj.(*rbacv1.ClusterRole)
				return append(validateRules(role.Rules, false), validateAggregationRule(role.AggregationRule)...)
			}, nil),
			Table: roleTable,
		},
		{
			Resource: rbacv1.Resource("rolebindings"),
			Singular: "rolebinding",
			New:      func() runtime.Object { return &rbacv1.RoleBinding{} },
			NewList:  func() runtime.Object { return &rbacv1.RoleBindingList{} },
			Strategy: strategy(true, func(obj runtime.Object) field.ErrorList {
				b := obj.(*rbacv1.RoleBinding)
				return validateBinding(b.RoleRef, b.Subjects, true)
			}, func(obj, old runtime.Object) field.ErrorList {
				return validateRoleRefUpdate(obj.(*rbacv1.RoleBinding).RoleRef, old.(*rbacv1.RoleBinding).RoleRef)
			}),
			Table: bindingTable("roleBinding", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"], func(obj runtime.Object) (metav1.ObjectMeta, rbacv1.RoleRef, []rbacv1.Subject) {
				b := obj.(*rbacv1.RoleBinding)
				return b.ObjectMeta, b.RoleRef, b.Subjects
			}),
		},
		{
			Resource: rbacv1.Resource("clusterrolebindings"),
			Singular: "clusterrolebinding",
			New:      func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
			NewList:  func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			Strategy: strategy(false, func(obj runtime.Object) field.ErrorList {
				b := obj.(*rbacv1.ClusterRoleBinding)
				return validateBinding(b.RoleRef, b.Subjects, false)
			}, func(obj, old runtime.Object) field.ErrorList {
				return validateRoleRefUpdate(obj.(*rbacv1.ClusterRoleBinding).RoleRef, old.(*rbacv1.ClusterRoleBinding).RoleRef)
			}),
			Table: bindingTable("clusterRoleBinding", rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], func(obj runtime.Object) (metav1.ObjectMeta, rbacv1.RoleRef, []rbacv1.Subject) {
				b := obj.(*rbacv1.ClusterRoleBinding)
				return b.ObjectMeta, b.RoleRef, b.Subjects
			}),
		},
	}
	storage := map[string]rest.Storage{}
	for _, r := range resources {
		store, err := registry.NewREST(optsGetter, r)
		if err != nil {
			return nil, err
		}
		storage[r.Resource.Resource] = store
	}
	return storage, nil
}

// strategy returns the strategy of one RBAC type: names are path segments
// (upstream's ValidateRBACName), and, as upstream, a PUT of a missing
// object creates it (reconcilers apply the default roles that way).
// validateUpdate, if set, adds to validate on update.
func strategy(namespaced bool, validate func(runtime.Object) field.ErrorList, validateUpdate func(obj, old runtime.Object) field.ErrorList) registry.Strategy {
	s := registry.NewStrategy(namespaced)
	s.ValidateName = path.ValidatePathSegmentName
	s.CreateOnUpdate = true
	s.ValidateFields = validate
	if validateUpdate != nil {
		s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
			return append(validate(obj), validateUpdate(obj, old)...)
		}
	}
	return s
}

// roleTable is what upstream shows for roles, which have no printer of
// their own: the default table of name and creation time.
var roleTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	Cells: func(obj runtime.Object) []any {
		m := obj.(metav1.Object)
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
}

// bindingTable prints a role binding or cluster role binding; kind names
// the type in the column descriptions, as upstream's do.
func bindingTable(kind, roleRefDoc string, parts func(runtime.Object) (metav1.ObjectMeta, rbacv1.RoleRef, []rbacv1.Subject)) registry.Table {
	return registry.Table{
		Columns: []metav1.TableColumnDefinition{
			registry.NameColumn,
			{Name: "Role", Type: "string", Description: roleRefDoc},
			registry.AgeColumn,
			{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
			{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
			{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
		},
		Cells: func(obj runtime.Object) []any {
			m, ref, subjects := parts(obj)
			var users, groups, sas []string
			for _, s := range subjects {
				switch s.Kind {
				case rbacv1.ServiceAccountKind:
					sas = append(sas, s.Namespace+"/"+s.Name)
				case rbacv1.UserKind:
					users = append(users, s.Name)
				case rbacv1.GroupKind:
					groups = append(groups, s.Name)
				}
			}
			return []any{m.Name, ref.Kind + "/" + ref.Name, registry.Age(m.CreationTimestamp),
				strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
		},
	}
}

// validateRules checks policy rules as upstream's ValidatePolicyRule.
func validateRules(rules []rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	// Upstream's declarative validation reports missing verbs, after
	// its handwritten checks.
	var errs, verbs field.ErrorList
	for i, rule := range rules {
		p := field.NewPath("rules").Index(i)
		if len(rule.Verbs) == 0 {
			verbs = append(verbs, field.Required(p.Child("verbs"), ""))
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
	return append(errs, verbs...)
}

func validateAggregationRule(rule *rbacv1.AggregationRule) field.ErrorList {
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
		errs = append(errs, metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, p.Index(i))...)
		if _, err := metav1.LabelSelectorAsSelector(selector); err != nil {
			errs = append(errs, field.Invalid(p.Index(i), selector, "invalid label selector."))
		}
	}
	return errs
}

// validateBinding checks the role reference and subjects of a binding:
// a RoleBinding may refer to a Role or a ClusterRole, a
// ClusterRoleBinding only to a ClusterRole, whose service accounts then
// need a namespace.
func validateBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	rp := field.NewPath("roleRef")
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
		errs = append(errs, field.Required(rp.Child("name"), ""))
	} else {
		for _, msg := range path.ValidatePathSegmentName(ref.Name, false) {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range subjects {
		errs = append(errs, validateSubject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

func validateSubject(s rbacv1.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
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
	return field.ErrorList{field.Invalid(field.NewPath("roleRef"), internal, apimachineryvalidation.FieldImmutableErrorMsg)}
}
