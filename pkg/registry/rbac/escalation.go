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
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Escalation is what kube-apiserver's escalation checks ask: the
// authorizer (for the escalate and bind verbs) and the rules a user holds.
type Escalation struct {
	Authorizer authorizer.Authorizer
	Rules      authorizer.RuleResolver
}

// WithEscalationChecks makes the RBAC storage of NewStorage refuse, as
// upstream's does, a Role or ClusterRole that grants what its writer does
// not hold (unless the writer may "escalate" roles), and a binding to a
// role whose rules its writer does not hold (unless the writer may "bind"
// it). Members of system:masters are not checked.
func WithEscalationChecks(storage map[string]rest.Storage, esc Escalation) map[string]rest.Storage {
	roles, clusterRoles := storage["roles"].(*registry.REST), storage["clusterroles"].(*registry.REST)
	roleRules := func(ctx context.Context, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
		switch ref.Kind {
		case "Role":
			obj, err := roles.Get(genericapirequest.WithNamespace(ctx, namespace), ref.Name, &metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return obj.(*rbacv1.Role).Rules, nil
		case "ClusterRole":
			obj, err := clusterRoles.Get(genericapirequest.WithNamespace(ctx, ""), ref.Name, &metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return obj.(*rbacv1.ClusterRole).Rules, nil
		}
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
	roleCheck := func(ctx context.Context, obj runtime.Object) error {
		if escalationAllowed(ctx) || esc.authorized(ctx, "escalate", roleRequest(ctx)) {
			return nil
		}
		var rules []rbacv1.PolicyRule
		switch r := obj.(type) {
		case *rbacv1.Role:
			rules = r.Rules
		case *rbacv1.ClusterRole:
			rules = r.Rules
		}
		return esc.confirmNoEscalation(ctx, rules)
	}
	bindingCheck := func(ctx context.Context, obj runtime.Object) error {
		if escalationAllowed(ctx) {
			return nil
		}
		var ref rbacv1.RoleRef
		namespace := ""
		switch b := obj.(type) {
		case *rbacv1.RoleBinding:
			ref, namespace = b.RoleRef, b.Namespace
		case *rbacv1.ClusterRoleBinding:
			ref = b.RoleRef
		}
		if esc.authorized(ctx, "bind", bindRequest(ref, namespace)) {
			return nil
		}
		rules, err := roleRules(ctx, ref, namespace)
		if err != nil {
			return err
		}
		return esc.confirmNoEscalation(ctx, rules)
	}
	for resource, check := range map[string]func(context.Context, runtime.Object) error{
		"roles": roleCheck, "clusterroles": roleCheck, "rolebindings": bindingCheck, "clusterrolebindings": bindingCheck,
	} {
		store := storage[resource].(*registry.REST)
		storage[resource] = &escalationChecked{REST: store, check: func(ctx context.Context, obj runtime.Object) error {
			if err := check(ctx, obj); err != nil {
				name := ""
				if m, err := meta.Accessor(obj); err == nil {
					name = m.GetName()
				}
				return apierrors.NewForbidden(store.DefaultQualifiedResource, name, err)
			}
			return nil
		}}
	}
	return storage
}

// escalationChecked is RBAC storage whose creates and updates are checked.
type escalationChecked struct {
	*registry.REST
	check func(ctx context.Context, obj runtime.Object) error
}

func (s *escalationChecked) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if err := s.check(ctx, obj); err != nil {
		return nil, err
	}
	return s.REST.Create(ctx, obj, createValidation, options)
}

func (s *escalationChecked) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions,
) (runtime.Object, bool, error) {
	checked := rest.WrapUpdatedObjectInfo(objInfo, func(ctx context.Context, obj, old runtime.Object) (runtime.Object, error) {
		if old != nil && onlyGCFieldsChange(obj, old) {
			return obj, nil // the garbage collector removing a finalizer or an owner
		}
		return obj, s.check(ctx, obj)
	})
	return s.REST.Update(ctx, name, checked, createValidation, updateValidation, forceAllowCreate, options)
}

// escalationAllowed: members of system:masters may grant anything (the
// server's own loopback client is one).
func escalationAllowed(ctx context.Context) bool {
	u, ok := genericapirequest.UserFrom(ctx)
	return ok && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup)
}

// authorized asks whether the request's user may do verb to what attrs
// names (the user and verb filled in).
func (e Escalation) authorized(ctx context.Context, verb string, attrs *authorizer.AttributesRecord) bool {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok || attrs == nil || e.Authorizer == nil {
		return false
	}
	attrs.User, attrs.Verb = u, verb
	decision, _, err := e.Authorizer.Authorize(ctx, attrs)
	return err == nil && decision == authorizer.DecisionAllow
}

// roleRequest is the role the request writes, as upstream's
// RoleEscalationAuthorized reads it from the request.
func roleRequest(ctx context.Context) *authorizer.AttributesRecord {
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	if !ok || !info.IsResourceRequest || info.APIGroup != rbacv1.GroupName || (info.Resource != "roles" && info.Resource != "clusterroles") {
		return nil
	}
	return &authorizer.AttributesRecord{APIGroup: info.APIGroup, APIVersion: "*", Resource: info.Resource, Name: info.Name, Namespace: info.Namespace, ResourceRequest: true}
}

// bindRequest is the role a binding in namespace refers to, as upstream's BindingAuthorized names it.
func bindRequest(ref rbacv1.RoleRef, namespace string) *authorizer.AttributesRecord {
	attrs := &authorizer.AttributesRecord{Namespace: namespace, APIGroup: ref.APIGroup, APIVersion: "*", Name: ref.Name, ResourceRequest: true}
	switch ref.Kind {
	case "ClusterRole":
		attrs.Resource = "clusterroles"
	case "Role":
		attrs.Resource = "roles"
	default:
		return nil
	}
	return attrs
}

// confirmNoEscalation fails unless the request's user holds every one of
// rules, in the request's namespace, with upstream's message.
func (e Escalation) confirmNoEscalation(ctx context.Context, rules []rbacv1.PolicyRule) error {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return errors.New("no user on context")
	}
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	resources, nonResources, _, resolveErr := e.Rules.RulesFor(ctx, u, namespace)
	var held []rbacv1.PolicyRule
	for _, r := range resources {
		held = append(held, rbacv1.PolicyRule{Verbs: r.GetVerbs(), APIGroups: r.GetAPIGroups(), Resources: r.GetResources(), ResourceNames: r.GetResourceNames()})
	}
	for _, r := range nonResources {
		held = append(held, rbacv1.PolicyRule{Verbs: r.GetVerbs(), NonResourceURLs: r.GetNonResourceURLs()})
	}
	covers, missing := validation.Covers(held, rules)
	if covers {
		return nil
	}
	var described []string
	for _, r := range compactRules(missing) {
		described = append(described, compactString(r))
	}
	slices.Sort(described)
	described = slices.Compact(described)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.GetName(), u.GetGroups(), strings.Join(described, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolveErr})
	}
	return errors.New(msg)
}

// compactRules merges the verbs of rules for one resource of one group
// (no names, no URLs), as upstream's CompactRules.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type simple struct{ group, resource string }
	var out []rbacv1.PolicyRule
	merged := map[simple]int{} // index in out
	for _, r := range rules {
		if len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			out = append(out, r)
			continue
		}
		key := simple{r.APIGroups[0], r.Resources[0]}
		if i, ok := merged[key]; ok {
			out[i].Verbs = append(out[i].Verbs, r.Verbs...)
			continue
		}
		merged[key] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

// compactString is upstream's rbacv1helpers.CompactString.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	for _, f := range []struct {
		name   string
		values []string
	}{{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"NonResourceURLs", r.NonResourceURLs}, {"ResourceNames", r.ResourceNames}, {"Verbs", r.Verbs}} {
		if len(f.values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", f.name, f.values))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// onlyGCFieldsChange reports whether obj differs from old in its owner
// references and finalizers only, as upstream's IsOnlyMutatingGCFields.
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	a, b := obj.DeepCopyObject(), old.DeepCopyObject()
	ma, errA := meta.Accessor(a)
	mb, errB := meta.Accessor(b)
	if errA != nil || errB != nil {
		return false
	}
	ma.SetOwnerReferences(mb.GetOwnerReferences())
	ma.SetFinalizers(mb.GetFinalizers())
	return apiequality.Semantic.DeepEqual(a, b)
}
