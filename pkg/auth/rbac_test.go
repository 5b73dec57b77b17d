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
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
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
	if len(roles) != 11 || len(bindings) != 4 {
		t.Errorf("got %d roles and %d bindings, want 11 and 4", len(roles), len(bindings))
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
