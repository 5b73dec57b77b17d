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
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestValidateNames(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{name: "system:controller:job-controller", want: []string{}},
		{name: "Admin_Role", want: []string{}},
		{name: "a/b", want: []string{"metadata.name: Invalid value"}},
		{name: "a%2Fb", want: []string{"metadata.name: Invalid value"}},
		{name: "..", want: []string{"metadata.name: Invalid value"}},
		{name: ".", want: []string{"metadata.name: Invalid value"}},
	}
	stores := map[string]func(string) runtime.Object{
		"roles": func(name string) runtime.Object {
			r := role(podReader())
			r.Name = name
			return r
		},
		"clusterroles": func(name string) runtime.Object {
			r := clusterRole(podReader())
			r.Name = name
			return r
		},
		"rolebindings": func(name string) runtime.Object {
			return roleBinding(func(b *rbacv1.RoleBinding) { b.Name = name })
		},
		"clusterrolebindings": func(name string) runtime.Object {
			return clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Name = name })
		},
	}
	for resource, newObj := range stores {
		strategy := registrytest.REST(t, NewStorage, resource).CreateStrategy
		for _, tt := range tests {
			t.Run(resource+"/"+tt.name, func(t *testing.T) {
				got := registrytest.ErrorPaths(strategy.Validate(context.Background(), newObj(tt.name)))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Validate errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestValidateRules(t *testing.T) {
	tests := []struct {
		name        string
		rules       []rbacv1.PolicyRule
		want        []string // for Roles
		wantCluster []string // for ClusterRoles
	}{
		{name: "no rules", rules: nil, want: []string{}, wantCluster: []string{}},
		{name: "resource rule", rules: []rbacv1.PolicyRule{podReader()}, want: []string{}, wantCluster: []string{}},
		{
			name:        "no verbs",
			rules:       []rbacv1.PolicyRule{podReader(), {APIGroups: []string{"apps"}, Resources: []string{"deployments"}}},
			want:        []string{"rules[1].verbs: Required value"},
			wantCluster: []string{"rules[1].verbs: Required value"},
		},
		{
			name:        "no apiGroups and resources",
			rules:       []rbacv1.PolicyRule{{Verbs: []string{"get"}}},
			want:        []string{"rules[0].apiGroups: Required value", "rules[0].resources: Required value"},
			wantCluster: []string{"rules[0].apiGroups: Required value", "rules[0].resources: Required value"},
		},
		{
			name:        "non-resource URLs: only in cluster roles",
			rules:       []rbacv1.PolicyRule{{NonResourceURLs: []string{"/healthz", "/version"}, Verbs: []string{"get"}}},
			want:        []string{"rules[0].nonResourceURLs: Invalid value"},
			wantCluster: []string{},
		},
		{
			name:        "non-resource URLs with resources",
			rules:       []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Resources: []string{"pods"}, Verbs: []string{"get"}}},
			want:        []string{"rules[0].nonResourceURLs: Invalid value", "rules[0].nonResourceURLs: Invalid value"},
			wantCluster: []string{"rules[0].nonResourceURLs: Invalid value"},
		},
	}
	roles := registrytest.REST(t, NewStorage, "roles")
	clusterRoles := registrytest.REST(t, NewStorage, "clusterroles")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(roles.CreateStrategy.Validate(context.Background(), role(tt.rules...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Role Validate errors (-want +got):\n%s", diff)
			}
			got = registrytest.ErrorPaths(roles.UpdateStrategy.ValidateUpdate(context.Background(), role(tt.rules...), role()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Role ValidateUpdate errors (-want +got):\n%s", diff)
			}
			got = registrytest.ErrorPaths(clusterRoles.CreateStrategy.Validate(context.Background(), clusterRole(tt.rules...)))
			if diff := cmp.Diff(tt.wantCluster, got); diff != "" {
				t.Errorf("ClusterRole Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRuleErrorsInUpstreamOrder: kube-apiserver 1.37 reports missing
// verbs by its declarative validation, after the handwritten checks and
// without their detail.
func TestRuleErrorsInUpstreamOrder(t *testing.T) {
	want := []string{
		"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
		"rules[1].resources: Required value: resource rules must supply at least one resource",
		"rules[0].verbs: Required value",
	}
	var got []string
	for _, err := range validateRole(role(rbacv1.PolicyRule{Resources: []string{"pods"}}, rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"get"}}), nil) {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestValidateAggregationRule(t *testing.T) {
	tests := []registrytest.Change[*rbacv1.AggregationRule]{
		{
			Name: "aggregated",
			Obj:  &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"rbac.example.com/aggregate-to-view": "true"}}}},
			Want: []string{},
		},
		{
			Name: "no selectors",
			Obj:  &rbacv1.AggregationRule{},
			Want: []string{"aggregationRule.clusterRoleSelectors: Required value"},
		},
		{
			Name: "bad selector",
			Obj:  &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn}}}}},
			Want: []string{"aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value", "aggregationRule.clusterRoleSelectors[0]: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "clusterroles").CreateStrategy
	registrytest.RunChanges(t, "Validate errors", tests, func(obj, _ *rbacv1.AggregationRule) []string {
		r := clusterRole()
		r.AggregationRule = obj
		return registrytest.ErrorPaths(strategy.Validate(context.Background(), r))
	})
}

func TestValidateRoleBinding(t *testing.T) {
	tests := []registrytest.Change[*rbacv1.RoleBinding]{
		{Name: "valid", Obj: roleBinding(func(*rbacv1.RoleBinding) {}), Want: []string{}},
		{
			Name: "to a ClusterRole, service account without namespace",
			Obj:  roleBinding(func(b *rbacv1.RoleBinding) { b.RoleRef.Kind, b.Subjects[2].Namespace = "ClusterRole", "" }),
			Want: []string{},
		},
		{
			Name: "roleRef of another kind, group and no name",
			Obj:  roleBinding(func(b *rbacv1.RoleBinding) { b.RoleRef = rbacv1.RoleRef{APIGroup: "example.com", Kind: "Policy"} }),
			Want: []string{"roleRef.apiGroup: Unsupported value", "roleRef.kind: Unsupported value", "roleRef.name: Required value"},
		},
		{
			Name: "roleRef name that is no path segment",
			Obj:  roleBinding(func(b *rbacv1.RoleBinding) { b.RoleRef.Name = "a/b" }),
			Want: []string{"roleRef.name: Invalid value"},
		},
		{
			Name: "subjects without names, of an unknown kind",
			Obj: roleBinding(func(b *rbacv1.RoleBinding) {
				b.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName}, {Kind: "Robot", Name: "r2d2"}}
			}),
			Want: []string{"subjects[0].name: Required value", "subjects[1].kind: Unsupported value"},
		},
		{
			Name: "subjects of the wrong apiGroups",
			Obj: roleBinding(func(b *rbacv1.RoleBinding) {
				b.Subjects[0].APIGroup = "example.com"
				b.Subjects[1].APIGroup = "example.com"
				b.Subjects[2].APIGroup = rbacv1.GroupName
			}),
			Want: []string{"subjects[0].apiGroup: Unsupported value", "subjects[1].apiGroup: Unsupported value", "subjects[2].apiGroup: Unsupported value"},
		},
		{
			Name: "service account name that is no DNS subdomain",
			Obj:  roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects[2].Name = "Default" }),
			Want: []string{"subjects[2].name: Invalid value"},
		},
		{
			Name: "no namespace",
			Obj:  roleBinding(func(b *rbacv1.RoleBinding) { b.Namespace = "" }),
			Want: []string{"metadata.namespace: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "rolebindings").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateClusterRoleBinding(t *testing.T) {
	tests := []registrytest.Change[*rbacv1.ClusterRoleBinding]{
		{Name: "valid", Obj: clusterRoleBinding(func(*rbacv1.ClusterRoleBinding) {}), Want: []string{}},
		{
			Name: "to a Role",
			Obj:  clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.RoleRef.Kind = "Role" }),
			Want: []string{"roleRef.kind: Unsupported value"},
		},
		{
			Name: "service account without namespace",
			Obj:  clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Subjects[2].Namespace = "" }),
			Want: []string{"subjects[2].namespace: Required value"},
		},
		{
			Name: "namespaced",
			Obj:  clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Namespace = "default" }),
			Want: []string{"metadata.namespace: Forbidden"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "clusterrolebindings").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateBindingUpdate(t *testing.T) {
	tests := []struct {
		name     string
		resource string
		old, obj runtime.Object
		want     []string
	}{
		{
			name:     "rolebinding: subjects may change",
			resource: "rolebindings",
			old:      roleBinding(func(*rbacv1.RoleBinding) {}),
			obj:      roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects = b.Subjects[:1] }),
			want:     []string{},
		},
		{
			name:     "rolebinding: roleRef may not change",
			resource: "rolebindings",
			old:      roleBinding(func(*rbacv1.RoleBinding) {}),
			obj:      roleBinding(func(b *rbacv1.RoleBinding) { b.RoleRef.Name = "pod-writer" }),
			want:     []string{"roleRef: Invalid value"},
		},
		{
			name:     "rolebinding: create rules apply too",
			resource: "rolebindings",
			old:      roleBinding(func(*rbacv1.RoleBinding) {}),
			obj:      roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects[0].Name = "" }),
			want:     []string{"subjects[0].name: Required value"},
		},
		{
			name:     "clusterrolebinding: roleRef may not change",
			resource: "clusterrolebindings",
			old:      clusterRoleBinding(func(*rbacv1.ClusterRoleBinding) {}),
			obj:      clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.RoleRef.Name = "admin" }),
			want:     []string{"roleRef: Invalid value"},
		},
		{
			name:     "clusterrolebinding: subjects may change",
			resource: "clusterrolebindings",
			old:      clusterRoleBinding(func(*rbacv1.ClusterRoleBinding) {}),
			obj:      clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Subjects = nil }),
			want:     []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, tt.resource).UpdateStrategy
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRoleRefChangeMessage: the refusal reads as kube-apiserver 1.37's,
// whose value is its internal RoleRef (no JSON names).
func TestRoleRefChangeMessage(t *testing.T) {
	old := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}
	errs := validateRoleRefUpdate(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "other"}, old)
	want := `roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"other"}: field is immutable`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v, want %s", errs, want)
	}
	if errs := validateRoleRefUpdate(old, old); len(errs) != 0 {
		t.Errorf("an unchanged roleRef: got %v, want none", errs)
	}
}
