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
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

func TestRuleAllows(t *testing.T) {
	resource := func(verb, group, res, sub, name string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{Verb: verb, APIGroup: group, Resource: res, Subresource: sub, Name: name, ResourceRequest: true}
	}
	url := func(verb, path string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{Verb: verb, Path: path}
	}
	for _, tc := range []struct {
		name  string
		rule  rbacv1.PolicyRule
		attrs authorizer.AttributesRecord
		want  bool
	}{
		{"exact", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, resource("get", "", "pods", "", "p"), true},
		{"other verb", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, resource("list", "", "pods", "", ""), false},
		{"other group", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"apps"}, Resources: []string{"pods"}}, resource("get", "", "pods", "", ""), false},
		{"wildcards", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, resource("delete", "apps", "deployments", "scale", "d"), true},
		{"a resource does not cover its subresources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}, resource("get", "", "pods", "log", "p"), false},
		{"resource/subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}, resource("get", "", "pods", "log", "p"), true},
		{"*/subresource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, resource("update", "apps", "deployments", "scale", "d"), true},
		{"*/subresource is not the resource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, resource("update", "apps", "deployments", "", "d"), false},
		{"named", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}, resource("get", "", "secrets", "", "a"), true},
		{"another name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}, resource("get", "", "secrets", "", "b"), false},
		{"names do not allow a list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}, resource("list", "", "secrets", "", ""), false},
		{"URL", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, url("get", "/healthz"), true},
		{"URL prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api/*"}}, url("get", "/api/v1"), true},
		{"URL not in the prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api/*"}}, url("get", "/apis"), false},
		{"a URL rule is not a resource rule", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, resource("get", "", "pods", "", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAllows(tc.attrs, &tc.rule); got != tc.want {
				t.Errorf("got %t, want %t", got, tc.want)
			}
		})
	}
}

func TestAppliesTo(t *testing.T) {
	sa := &user.DefaultInfo{Name: "system:serviceaccount:ns:robot"}
	for _, tc := range []struct {
		name    string
		u       user.Info
		subject rbacv1.Subject
		ns      string
		want    bool
	}{
		{"user", &user.DefaultInfo{Name: "bob"}, rbacv1.Subject{Kind: rbacv1.UserKind, Name: "bob"}, "", true},
		{"another user", &user.DefaultInfo{Name: "bob"}, rbacv1.Subject{Kind: rbacv1.UserKind, Name: "alice"}, "", false},
		{"group", &user.DefaultInfo{Name: "bob", Groups: []string{"devs"}}, rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "devs"}, "", true},
		{"service account", sa, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot", Namespace: "ns"}, "", true},
		{"service account in the binding's namespace", sa, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot"}, "ns", true},
		{"service account of another namespace", sa, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot"}, "other", false},
		{"service account with no namespace at all", sa, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := appliesTo(tc.u, []rbacv1.Subject{tc.subject}, tc.ns); got != tc.want {
				t.Errorf("got %t, want %t", got, tc.want)
			}
		})
	}
}

func TestDefaultClusterRolesParse(t *testing.T) {
	roles, bindings, err := DefaultClusterRoles()
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 20 || len(bindings) != 6 {
		t.Errorf("got %d roles and %d bindings, want 20 and 6", len(roles), len(bindings))
	}
	for _, r := range roles {
		if r.Name == "cluster-admin" && (len(r.Rules) != 2 || r.Rules[0].Verbs[0] != "*") {
			t.Errorf("cluster-admin: got rules %v, want upstream's two wildcard rules", r.Rules)
		}
	}
}

func TestAggregatedRulesOfTheDefaults(t *testing.T) {
	roles, _, err := DefaultClusterRoles()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*rbacv1.ClusterRole{}
	for _, r := range roles {
		byName[r.Name] = r
	}
	if rules, err := AggregatedRules(byName["cluster-admin"], roles); err != nil || len(rules) != 0 {
		t.Errorf("a role without an aggregation rule: got %v, %v; want none", rules, err)
	}
	if err := aggregateDefaults(roles); err != nil {
		t.Fatal(err)
	}
	// view is aggregate-to-view's; edit adds aggregate-to-edit's to view's
	// (view is labelled aggregate-to-edit); admin adds aggregate-to-admin's
	// to edit's (edit is labelled aggregate-to-admin).
	count := func(names ...string) int {
		n := 0
		for _, name := range names {
			n += len(byName[name].Rules)
		}
		return n
	}
	for _, tc := range []struct {
		role string
		want int
	}{
		{"view", count("system:aggregate-to-view")},
		{"edit", count("system:aggregate-to-edit", "system:aggregate-to-view")},
		{"admin", count("system:aggregate-to-admin", "system:aggregate-to-edit", "system:aggregate-to-view")},
	} {
		if got := len(byName[tc.role].Rules); got != tc.want || got == 0 {
			t.Errorf("%s: got %d rules, want %d", tc.role, got, tc.want)
		}
	}
}

// newRBAC returns RBAC over stores holding objs, indexed as the server's.
func newRBAC(t testing.TB, objs ...runtime.Object) *RBAC {
	t.Helper()
	stores := map[string]cache.Indexer{}
	for _, kind := range []string{"Role", "ClusterRole"} {
		stores[kind] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		stores[kind] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, BindingIndexers)
	}
	for _, o := range objs {
		kind := reflect.TypeOf(o).Elem().Name()
		if err := stores[kind].Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return &RBAC{
		Roles: rbaclisters.NewRoleLister(stores["Role"]), ClusterRoles: rbaclisters.NewClusterRoleLister(stores["ClusterRole"]),
		RoleBindings: stores["RoleBinding"], ClusterRoleBindings: stores["ClusterRoleBinding"],
	}
}

func getRule(resources ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: resources}}
}

// TestRBACFindsBindingsBySubject: each kind of subject finds its bindings,
// in the binding's namespace only, and a binding to others does not.
func TestRBACFindsBindingsBySubject(t *testing.T) {
	rbac := newRBAC(t,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "get-nodes"}, Rules: getRule("nodes")},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "get-secrets"}, Rules: getRule("secrets")},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "get-pods"}, Rules: getRule("pods")},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ops-nodes"},
			RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "get-nodes"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, Name: "ops"}, {Kind: rbacv1.ServiceAccountKind, Namespace: "a", Name: "robot"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "bob-pods"},
			RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "get-pods"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "robot-secrets"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "get-secrets"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "robot"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "alice-secrets"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "get-secrets"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}},
	)
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{"ops"}}
	robot := &user.DefaultInfo{Name: "system:serviceaccount:a:robot"}
	get := func(u user.Info, ns, resource string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: "get", Namespace: ns, Resource: resource, ResourceRequest: true}
	}
	for _, tc := range []struct {
		attrs      authorizer.AttributesRecord
		wantReason string // "" for no opinion
	}{
		{get(bob, "a", "pods"), `RBAC: allowed by RoleBinding "bob-pods/a" of Role "get-pods" to User "bob"`},
		{get(bob, "b", "pods"), ""},
		{get(bob, "a", "secrets"), ""},
		{get(bob, "", "nodes"), `RBAC: allowed by ClusterRoleBinding "ops-nodes" of ClusterRole "get-nodes" to Group "ops"`},
		{get(robot, "", "nodes"), `RBAC: allowed by ClusterRoleBinding "ops-nodes" of ClusterRole "get-nodes" to ServiceAccount "robot/a"`},
		{get(robot, "a", "secrets"), `RBAC: allowed by RoleBinding "robot-secrets/a" of ClusterRole "get-secrets" to ServiceAccount "robot/a"`},
		{get(&user.DefaultInfo{Name: "system:serviceaccount:b:robot"}, "a", "secrets"), ""},
	} {
		t.Run(fmt.Sprintf("%s %s in %q", tc.attrs.User.GetName(), tc.attrs.Resource, tc.attrs.Namespace), func(t *testing.T) {
			decision, reason, err := rbac.Authorize(context.Background(), tc.attrs)
			want := authorizer.DecisionNoOpinion
			if tc.wantReason != "" {
				want = authorizer.DecisionAllow
			}
			if err != nil || decision != want || reason != tc.wantReason {
				t.Errorf("got %v %q %v, want %v %q", decision, reason, err, want, tc.wantReason)
			}
		})
	}
}

// BenchmarkAuthorize: a user's request among n RoleBindings to other users
// in its namespace costs the same whatever n.
func BenchmarkAuthorize(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			objs := []runtime.Object{&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "get-pods"}, Rules: getRule("pods")}}
			for i := range n {
				objs = append(objs, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("user-%d", i)},
					RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "get-pods"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: fmt.Sprintf("user-%d", i)}}})
			}
			rbac := newRBAC(b, objs...)
			attrs := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "user-7", Groups: []string{"system:authenticated"}},
				Verb: "get", Namespace: "a", Resource: "pods", ResourceRequest: true}
			for b.Loop() {
				if d, _, _ := rbac.Authorize(context.Background(), attrs); d != authorizer.DecisionAllow {
					b.Fatal(d)
				}
			}
		})
	}
}
