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
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func podReader() rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}
}

func role(rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "default", UID: "uid-1", ResourceVersion: "1"}, Rules: rules}
}

func clusterRole(rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:pod-reader", UID: "uid-1", ResourceVersion: "1"}, Rules: rules}
}

// subjects are one subject of each kind; defaulting fills in the apiGroups.
func subjects() []rbacv1.Subject {
	return []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "jane"},
		{Kind: rbacv1.GroupKind, Name: "system:authenticated"},
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "kube-system"},
	}
}

func roleBinding(mutate func(*rbacv1.RoleBinding)) *rbacv1.RoleBinding {
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-pods", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
		Subjects:   subjects(),
	}
	api.Scheme.Default(b)
	mutate(b)
	return b
}

func clusterRoleBinding(mutate func(*rbacv1.ClusterRoleBinding)) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-pods", UID: "uid-1", ResourceVersion: "1"},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "system:pod-reader"},
		Subjects:   subjects(),
	}
	api.Scheme.Default(b)
	mutate(b)
	return b
}

func TestStorage(t *testing.T) {
	tests := []struct {
		resource   string
		namespaced bool
	}{
		{resource: "roles", namespaced: true},
		{resource: "clusterroles", namespaced: false},
		{resource: "rolebindings", namespaced: true},
		{resource: "clusterrolebindings", namespaced: false},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, tt.resource)
			if got, want := store.DefaultQualifiedResource, rbacv1.Resource(tt.resource); got != want {
				t.Errorf("resource: got %v, want %v", got, want)
			}
			if got := store.NamespaceScoped(); got != tt.namespaced {
				t.Errorf("NamespaceScoped: got %v, want %v", got, tt.namespaced)
			}
			if got := store.ShortNames(); len(got) != 0 {
				t.Errorf("ShortNames: got %v, want none", got)
			}
			// As upstream: reconcilers PUT the objects they want.
			if !store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
				t.Errorf("AllowCreateOnUpdate: got false, want true")
			}
		})
	}
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "roles", "clusterrolebindings", "clusterroles", "rolebindings", "roles")
}

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

func TestPrepareLeavesObjectsAlone(t *testing.T) {
	tests := []struct {
		resource string
		obj, old runtime.Object
	}{
		{resource: "roles", obj: role(podReader()), old: role()},
		{resource: "clusterroles", obj: clusterRole(podReader()), old: clusterRole()},
		{resource: "rolebindings", obj: roleBinding(func(*rbacv1.RoleBinding) {}), old: roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects = nil })},
		{resource: "clusterrolebindings", obj: clusterRoleBinding(func(*rbacv1.ClusterRoleBinding) {}), old: clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Subjects = nil })},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, tt.resource)
			want := tt.obj.DeepCopyObject()
			store.CreateStrategy.PrepareForCreate(context.Background(), tt.obj)
			store.UpdateStrategy.PrepareForUpdate(context.Background(), tt.obj, tt.old)
			if diff := cmp.Diff(want, tt.obj); diff != "" {
				t.Errorf("object after PrepareForCreate/PrepareForUpdate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoleTables(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600)))
	tests := []struct {
		resource string
		obj      runtime.Object
		want     []any
	}{
		{resource: "roles", obj: role(), want: []any{"pod-reader", "0001-01-01T00:00:00Z"}},
		{
			resource: "clusterroles",
			obj: func() runtime.Object {
				r := clusterRole()
				r.CreationTimestamp = created
				return r
			}(),
			want: []any{"system:pod-reader", "2026-03-04T04:06:07Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Created At"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if got := table.ColumnDefinitions[1].Type; got != "date" {
				t.Errorf("Created At type: got %q, want date", got)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingTables(t *testing.T) {
	more := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "bob", APIGroup: rbacv1.GroupName},
		{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "ci"},
	}
	tests := []struct {
		name     string
		resource string
		obj      runtime.Object
		want     []any
	}{
		{
			name:     "rolebinding",
			resource: "rolebindings",
			obj:      roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects = append(b.Subjects, more...) }),
			want:     []any{"read-pods", "Role/pod-reader", "<unknown>", "jane, bob", "system:authenticated", "kube-system/default, ci/builder"},
		},
		{
			name:     "clusterrolebinding without subjects",
			resource: "clusterrolebindings",
			obj:      clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Subjects = nil }),
			want:     []any{"read-pods", "ClusterRole/system:pod-reader", "<unknown>", "", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			for _, c := range table.ColumnDefinitions[3:] {
				if c.Priority != 1 {
					t.Errorf("column %s priority: got %d, want 1", c.Name, c.Priority)
				}
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
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
