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
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestEscalationIsRefused: a user who may write Roles and RoleBindings can
// grant only what it holds, unless it may escalate (roles) or bind (the
// role a binding names), as upstream's escalation checks.
func TestEscalationIsRefused(t *testing.T) {
	s := testserver.Start(t)
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(s.Config)
	manager := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "rbac-manager"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"create", "update", "get"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
	}}
	if _, err := admin.RbacV1().Roles("default").Create(ctx, manager, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind(t, admin, "dana-manages", "Role", "rbac-manager", "dana")
	cfg, err := s.AddUser("dana")
	if err != nil {
		t.Fatal(err)
	}
	dana := kubernetes.NewForConfigOrDie(cfg)
	role := func(name string, rules ...rbacv1.PolicyRule) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
			return err
		}
	}
	binding := func(name, kind, roleName string) func(context.Context, kubernetes.Interface) error {
		return func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName},
				Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "eve"}}}, metav1.CreateOptions{})
			return err
		}
	}
	getConfigMaps := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}
	listSecretsRule := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list", "get"}}
	eventually(t, dana, role("reader", getConfigMaps))
	check(t, dana, []request{
		{name: "a role granting what dana lacks", do: role("escalated", listSecretsRule),
			wantErr: "roles.rbac.authorization.k8s.io \"escalated\" is forbidden: user \"dana\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n" +
				`{APIGroups:[""], Resources:["secrets"], Verbs:["list" "get"]}`},
		{name: "a binding to the role dana wrote", do: binding("eve-reads", "Role", "reader")},
	})
	if err := binding("eve-admin", "ClusterRole", "admin")(ctx, dana); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), `is attempting to grant RBAC permissions not currently held`) {
		t.Errorf("a binding to admin: got %v, want 403 for escalation", err)
	}

	// With escalate on roles and bind on admin, both go through.
	extra := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "escalator"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}, Verbs: []string{"escalate"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"admin"}, Verbs: []string{"bind"}},
	}}
	if _, err := admin.RbacV1().Roles("default").Create(ctx, extra, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind(t, admin, "dana-escalates", "Role", "escalator", "dana")
	eventually(t, dana, role("escalated", listSecretsRule))
	eventually(t, dana, binding("eve-admin", "ClusterRole", "admin"))
}

// bind binds the role of kind and name to user in default, as the admin.
func bind(t *testing.T, admin kubernetes.Interface, name, kind, role, user string) {
	t.Helper()
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := admin.RbacV1().RoleBindings("default").Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
