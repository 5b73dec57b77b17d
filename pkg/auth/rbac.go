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
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

// RBAC is kube-apiserver's RBAC authorizer (k8s.io/kubernetes
// plugin/pkg/auth/authorizer/rbac), over listers of the RBAC objects: a
// request is allowed if a rule of a role bound to its user, one of its
// groups or its service account allows it; otherwise RBAC has no opinion.
type RBAC struct {
	Roles        rbaclisters.RoleLister
	ClusterRoles rbaclisters.ClusterRoleLister
	// RoleBindings and ClusterRoleBindings are the informers' stores of
	// the bindings, with BindingIndexers.
	RoleBindings, ClusterRoleBindings cache.Indexer
}

var (
	_ authorizer.Authorizer   = (*RBAC)(nil)
	_ authorizer.RuleResolver = (*RBAC)(nil)
)

// Authorize implements authorizer.Authorizer.
func (r *RBAC) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	var errs []error
	reason := ""
	r.visitRulesFor(attrs.GetUser(), attrs.GetNamespace(), func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil && RuleAllows(attrs, rule) {
			reason = "RBAC: allowed by " + source.String()
			return false
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	if reason != "" {
		return authorizer.DecisionAllow, reason, nil
	}
	if len(errs) > 0 {
		reason = fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs))
	}
	return authorizer.DecisionNoOpinion, reason, nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer: RBAC's
// decisions are unconditional.
func (r *RBAC) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(r.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer: there are none.
func (r *RBAC) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver (SelfSubjectRulesReview).
func (r *RBAC) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	var resources []authorizer.ResourceRuleInfo
	var nonResources []authorizer.NonResourceRuleInfo
	var errs []error
	r.visitRulesFor(u, namespace, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
			return true
		}
		if len(rule.Resources) > 0 {
			resources = append(resources, &authorizer.DefaultResourceRuleInfo{
				Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames,
			})
		}
		if len(rule.NonResourceURLs) > 0 {
			nonResources = append(nonResources, &authorizer.DefaultNonResourceRuleInfo{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
		}
		return true
	})
	return resources, nonResources, false, utilerrors.NewAggregate(errs)
}

// visitRulesFor calls visit with each rule bound to u cluster-wide and, if
// namespace is set, in namespace, and with each error met finding them,
// until visit returns false. The bindings are those of u's subject keys
// in the index (each once, by name), so a request costs the same
// whatever the number of bindings to others.
func (r *RBAC) visitRulesFor(u user.Info, namespace string, visit func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool) {
	subjects := subjectsOf(u)
	crbs, err := byIndex[*rbacv1.ClusterRoleBinding](r.ClusterRoleBindings, "", subjects)
	if err != nil && !visit(nil, nil, err) {
		return
	}
	for _, b := range crbs {
		i, ok := appliesTo(u, b.Subjects, "")
		if !ok {
			continue
		}
		rules, err := r.roleRules(b.RoleRef, "")
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		source := bindingSource{kind: "ClusterRoleBinding", name: b.Name, roleRef: b.RoleRef, subject: b.Subjects[i]}
		for j := range rules {
			if !visit(source, &rules[j], nil) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	rbs, err := byIndex[*rbacv1.RoleBinding](r.RoleBindings, namespace, subjects)
	if err != nil && !visit(nil, nil, err) {
		return
	}
	for _, b := range rbs {
		i, ok := appliesTo(u, b.Subjects, namespace)
		if !ok {
			continue
		}
		rules, err := r.roleRules(b.RoleRef, namespace)
		if err != nil {
			if !visit(nil, nil, err) {
				return
			}
			continue
		}
		source := bindingSource{kind: "RoleBinding", name: b.Name, namespace: namespace, roleRef: b.RoleRef, subject: b.Subjects[i]}
		for j := range rules {
			if !visit(source, &rules[j], nil) {
				return
			}
		}
	}
}

// SubjectIndex is the index of RoleBindings and ClusterRoleBindings by
// subject that RBAC reads: add BindingIndexers to both informers.
const SubjectIndex = "rbac-subject"

// BindingIndexers index bindings by subject: a user or service account by
// its user name, a group by its name, each in the binding's namespace
// ("" for a ClusterRoleBinding).
var BindingIndexers = cache.Indexers{SubjectIndex: func(obj any) ([]string, error) {
	switch b := obj.(type) {
	case *rbacv1.RoleBinding:
		return subjectKeys(b.Namespace, b.Subjects), nil
	case *rbacv1.ClusterRoleBinding:
		return subjectKeys("", b.Subjects), nil
	}
	return nil, nil
}}

// subjectKeys are the index keys of subjects bound in namespace: those
// that appliesTo would match a user by.
func subjectKeys(namespace string, subjects []rbacv1.Subject) []string {
	keys := make([]string, 0, len(subjects))
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			keys = append(keys, subjectKey(namespace, "user", s.Name))
		case rbacv1.GroupKind:
			keys = append(keys, subjectKey(namespace, "group", s.Name))
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = namespace
			}
			if ns != "" {
				keys = append(keys, subjectKey(namespace, "user", serviceaccount.MakeUsername(ns, s.Name)))
			}
		}
	}
	return keys
}

func subjectKey(namespace, kind, name string) string { return namespace + "/" + kind + ":" + name }

// subjectsOf are the subjects u is: its name and its groups.
func subjectsOf(u user.Info) []subject {
	keys := []subject{{"user", u.GetName()}}
	for _, g := range u.GetGroups() {
		keys = append(keys, subject{"group", g})
	}
	return keys
}

type subject struct{ kind, name string }

// byIndex returns the bindings in namespace of any of subjects, each once,
// sorted by name.
func byIndex[T interface{ GetName() string }](index cache.Indexer, namespace string, subjects []subject) ([]T, error) {
	var out []T
	for _, s := range subjects {
		objs, err := index.ByIndex(SubjectIndex, subjectKey(namespace, s.kind, s.name))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if b, ok := o.(T); ok {
				out = append(out, b)
			}
		}
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(a.GetName(), b.GetName()) })
	return slices.CompactFunc(out, func(a, b T) bool { return a.GetName() == b.GetName() }), nil
}

// roleRules returns the rules of the role ref refers to, from a binding in
// namespace ("" for a ClusterRoleBinding).
func (r *RBAC) roleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		role, err := r.Roles.Roles(namespace).Get(ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	case "ClusterRole":
		role, err := r.ClusterRoles.Get(ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
}

// bindingSource names the binding a rule came from, as upstream's reasons do.
type bindingSource struct {
	kind, name, namespace string
	roleRef               rbacv1.RoleRef
	subject               rbacv1.Subject
}

func (s bindingSource) String() string {
	subject := fmt.Sprintf("%s %q", s.subject.Kind, s.subject.Name)
	if s.subject.Kind == rbacv1.ServiceAccountKind {
		ns := s.subject.Namespace
		if ns == "" {
			ns = s.namespace
		}
		subject = fmt.Sprintf("%s %q", s.subject.Kind, s.subject.Name+"/"+ns)
	}
	name := s.name
	if s.namespace != "" {
		name += "/" + s.namespace
	}
	return fmt.Sprintf("%s %q of %s %q to %s", s.kind, name, s.roleRef.Kind, s.roleRef.Name, subject)
}

// appliesTo returns the index of the first of subjects that is u, and
// whether there is one. A ServiceAccount subject without a namespace is in
// the binding's namespace.
func appliesTo(u user.Info, subjects []rbacv1.Subject, namespace string) (int, bool) {
	for i, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if u.GetName() == s.Name {
				return i, true
			}
		case rbacv1.GroupKind:
			if slices.Contains(u.GetGroups(), s.Name) {
				return i, true
			}
		case rbacv1.ServiceAccountKind:
			ns := namespace
			if s.Namespace != "" {
				ns = s.Namespace
			}
			if ns != "" && serviceaccount.MatchesUsername(ns, s.Name, u.GetName()) {
				return i, true
			}
		}
	}
	return 0, false
}

// RuleAllows reports whether rule allows the request attrs describes, as
// upstream's: verbs, API groups, resources ("resource/subresource", or
// "*/subresource") and names for resource requests; verbs and URLs (a
// trailing * matches any suffix) for the others.
func RuleAllows(attrs authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !matches(rule.Verbs, attrs.GetVerb(), rbacv1.VerbAll) {
		return false
	}
	if !attrs.IsResourceRequest() {
		for _, u := range rule.NonResourceURLs {
			if u == rbacv1.NonResourceAll || u == attrs.GetPath() ||
				strings.HasSuffix(u, "*") && strings.HasPrefix(attrs.GetPath(), strings.TrimRight(u, "*")) {
				return true
			}
		}
		return false
	}
	if !matches(rule.APIGroups, attrs.GetAPIGroup(), rbacv1.APIGroupAll) {
		return false
	}
	resource, sub := attrs.GetResource(), attrs.GetSubresource()
	if sub != "" {
		resource += "/" + sub
	}
	resourceOK := false
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll || r == resource || sub != "" && r == "*/"+sub {
			resourceOK = true
			break
		}
	}
	return resourceOK && (len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, attrs.GetName()))
}

func matches(set []string, value, all string) bool {
	for _, s := range set {
		if s == all || s == value {
			return true
		}
	}
	return false
}
