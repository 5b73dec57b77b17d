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

package flowcontrol

import (
	"context"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func withRule(mutate func(r *flowcontrolv1.PolicyRulesWithSubjects)) func(*flowcontrolv1.FlowSchema) {
	return func(fs *flowcontrolv1.FlowSchema) { mutate(&fs.Spec.Rules[0]) }
}

// flowSchemaCases are changes of validSchema("web") and their messages,
// which are upstream's.
func flowSchemaCases() []registrytest.Mutation[*flowcontrolv1.FlowSchema] {
	return []registrytest.Mutation[*flowcontrolv1.FlowSchema]{
		{Name: "valid", Mutate: func(*flowcontrolv1.FlowSchema) {}, Want: []string{}},
		{
			Name:   "precedence 0",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 0 },
			Want:   []string{"spec.matchingPrecedence: Invalid value: 0: must be a positive value"},
		},
		{
			Name:   "precedence above 10000",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 10001 },
			Want:   []string{"spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"},
		},
		{
			Name:   "precedence 1 but for exempt",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 1 },
			Want:   []string{"spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"},
		},
		{
			Name:   "unknown distinguisher",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.DistinguisherMethod.Type = "ByGroup" },
			Want:   []string{`spec.distinguisherMethod.type: Unsupported value: {"Type":"ByGroup"}: supported values: "ByNamespace", "ByUser"`},
		},
		{
			Name:   "no priority level",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "" },
			Want:   []string{"spec.priorityLevelConfiguration.name: Required value: must reference a priority level"},
		},
		{
			Name:   "a priority level name that is no DNS subdomain",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.PriorityLevelConfiguration.Name = "Work_Load" },
			Want: []string{`spec.priorityLevelConfiguration.name: Invalid value: "Work_Load": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
				`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		},
		{
			Name:   "a rule without subjects",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects = nil }),
			Want:   []string{"spec.rules[0].subjects: Required value: subjects must contain at least one value"},
		},
		{
			Name:   "a rule without resource or non-resource rules",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.ResourceRules = nil }),
			Want:   []string{"spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"},
		},
		{
			Name: "a user subject with a group",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
				r.Subjects[0].Kind = flowcontrolv1.SubjectKindUser
				r.Subjects = append(r.Subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{},
					User: &flowcontrolv1.UserSubject{Name: "u"}, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{}})
			}),
			Want: []string{
				"spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'",
				"spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
				"spec.rules[0].subjects[1].group.name: Required value",
				"spec.rules[0].subjects[1].serviceAccount: Forbidden: serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
				"spec.rules[0].subjects[1].user: Forbidden: user is forbidden when subject kind is not 'User'",
			},
		},
		{
			Name: "service accounts",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
				r.Subjects = []flowcontrolv1.Subject{
					{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*", Namespace: "kube-system"}},
					{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*"}},
					{Kind: flowcontrolv1.SubjectKindServiceAccount},
				}
			}),
			Want: []string{
				"spec.rules[0].subjects[1].serviceAccount.namespace: Required value: must specify namespace for service account",
				"spec.rules[0].subjects[2].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'",
			},
		},
		{
			Name:   "unknown subject kind",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) { r.Subjects[0].Kind = "Robot" }),
			Want:   []string{`spec.rules[0].subjects[0].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"`},
		},
		{
			Name: "resource rules",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
				r.ResourceRules = []flowcontrolv1.ResourcePolicyRule{
					{Verbs: []string{"get", "*"}, APIGroups: []string{"apps", "*"}, Resources: []string{"*", "pods"}, Namespaces: []string{"*", "default"}},
					{Verbs: []string{"get", "fly"}},
					{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ClusterScope: true},
				}
			}),
			Want: []string{
				`spec.rules[0].resourceRules[0].verbs: Invalid value: ["get","*"]: if '*' is present, must not specify other verbs`,
				`spec.rules[0].resourceRules[0].apiGroups: Invalid value: ["apps","*"]: if '*' is present, must not specify other api groups`,
				`spec.rules[0].resourceRules[0].resources: Invalid value: ["*","pods"]: if '*' is present, must not specify other resources`,
				`spec.rules[0].resourceRules[0].namespaces: Invalid value: ["*","default"]: if '*' is present, must not specify other namespaces`,
				`spec.rules[0].resourceRules[1].verbs: Unsupported value: ["get","fly"]: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"`,
				"spec.rules[0].resourceRules[1].apiGroups: Required value: resource rules must supply at least one api group",
				"spec.rules[0].resourceRules[1].resources: Required value: resource rules must supply at least one resource",
				"spec.rules[0].resourceRules[1].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace",
			},
		},
		{
			Name: "a namespace that is no DNS label",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
				r.ResourceRules[0].Namespaces = []string{"default", "Kube_System"}
			}),
			Want: []string{`spec.rules[0].resourceRules[0].namespaces[1]: Invalid value: "Kube_System": each member of this list must be '*' or a DNS-1123 label; ` +
				`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character ` +
				`(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		},
		{
			Name: "non-resource rules",
			Mutate: withRule(func(r *flowcontrolv1.PolicyRulesWithSubjects) {
				r.NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{
					{Verbs: []string{"*"}, NonResourceURLs: []string{"/", "/healthz", "/api/*", "", "api", "/a b", "/a//b", "/api/*/x", "/a*"}},
					{NonResourceURLs: []string{"/metrics", "*"}},
				}
			}),
			Want: []string{
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[3]: Invalid value: "": must not be empty`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[4]: Invalid value: "api": must start with slash`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[5]: Invalid value: "/a b": must not contain white-space`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[6]: Invalid value: "/a//b": must not contain double slash`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[7]: Invalid value: "/api/*/x": wildcard can only do suffix matching`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[8]: Invalid value: "/a*": wildcard can only do suffix matching`,
				"spec.rules[0].nonResourceRules[1].verbs: Required value: verbs must contain at least one value",
				`spec.rules[0].nonResourceRules[1].nonResourceURLs: Invalid value: ["/metrics","*"]: if '*' is present, must not specify other non-resource URLs`,
			},
		},
		{
			// The value is upstream's internal spec, keyed by Go field names.
			Name:   "a mandatory schema's spec changed",
			Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Name = "catch-all" },
			Want: []string{`spec: Invalid value: {"PriorityLevelConfiguration":{"Name":"workload"},"MatchingPrecedence":500,"DistinguisherMethod":{"Type":"ByUser"},` +
				`"Rules":[{"Subjects":[{"Kind":"Group","User":null,"Group":{"Name":"system:authenticated"},"ServiceAccount":null}],` +
				`"ResourceRules":[{"Verbs":["get"],"APIGroups":["*"],"Resources":["*"],"ClusterScope":false,"Namespaces":["*"]}],"NonResourceRules":null}]}: ` +
				`spec of 'catch-all' must equal the fixed value`},
		},
		{
			Name: "status conditions",
			Mutate: func(fs *flowcontrolv1.FlowSchema) {
				fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling"}, {}, {Type: "Dangling"}, {}}
			},
			Want: []string{
				"status.conditions[1].type: Required value",
				`status.conditions[2].type: Duplicate value: "Dangling"`,
				`status.conditions[3].type: Duplicate value: ""`,
				"status.conditions[3].type: Required value",
			},
		},
	}
}

func TestValidateFlowSchema(t *testing.T) {
	tests := flowSchemaCases()
	store := registrytest.REST(t, NewStorage, "flowschemas")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.Messages, func() *flowcontrolv1.FlowSchema { return validSchema("web") }, tests)
	// Upstream validates an update as a create.
	registrytest.ValidateUpdateMutations(t, store.UpdateStrategy, registrytest.Messages, func() *flowcontrolv1.FlowSchema { return validSchema("web") }, tests)
}

// TestMandatoryFlowSchemas: the mandatory schemas, and the suggested
// ones, are valid as k8s.io/apiserver defines them; the spec of "exempt"
// may not change.
func TestMandatoryFlowSchemas(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "flowschemas")
	for _, fs := range append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...) {
		if got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), fs.DeepCopy())); len(got) != 0 {
			t.Errorf("%s: got errors %v, want none", fs.Name, got)
		}
	}
	exempt := bootstrap.MandatoryFlowSchemaExempt.DeepCopy()
	changed := registrytest.Modified(exempt, func(fs *flowcontrolv1.FlowSchema) { fs.Spec.MatchingPrecedence = 2 })
	errs := store.UpdateStrategy.ValidateUpdate(context.Background(), changed, exempt)
	if want := "spec of 'exempt' must equal the fixed value"; len(errs) != 1 || errs[0].Field != "spec" || errs[0].Detail != want {
		t.Errorf("exempt with precedence 2: got %v, want one error on spec with detail %q", errs, want)
	}
}
