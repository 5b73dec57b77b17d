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

package admissionregistration

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validMatchResources matches deployments, as defaulting leaves it.
func validMatchResources() *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{},
		ObjectSelector:    &metav1.LabelSelector{},
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
				Scope: ptr.To(admissionregistrationv1.AllScopes)},
		}}},
	}
}

func validPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas", ResourceVersion: "1"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: validMatchResources(),
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5"}},
		},
	}
}

func withPolicy(mutate func(p *admissionregistrationv1.ValidatingAdmissionPolicy)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := validPolicy()
	mutate(p)
	return p
}

func TestValidateValidatingPolicy(t *testing.T) {
	tests := []registrytest.Change[*admissionregistrationv1.ValidatingAdmissionPolicy]{
		{Name: "valid", Obj: validPolicy(), Want: []string{}},
		{
			Name: "valid: params, variables, message, messageExpression, reason, audit annotation, match condition",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
				p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "max", Expression: "int(params.data.max)"}}
				p.Spec.Validations = []admissionregistrationv1.Validation{{
					Expression: "object.spec.replicas <= variables.max", Message: "too many replicas",
					MessageExpression: `"replicas: " + string(object.spec.replicas)`, Reason: ptr.To(metav1.StatusReasonInvalid),
				}}
				p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "replicas", ValueExpression: "string(object.spec.replicas)"}}
				p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "has-params", Expression: "params != null"}}
			}),
			Want: []string{},
		},
		{
			Name: "audit annotations only",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Validations = nil
				p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "null"}}
			}),
			Want: []string{},
		},
		{
			Name: "no matchConstraints, no failurePolicy",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.MatchConstraints, p.Spec.FailurePolicy = nil, nil
			}),
			Want: []string{"spec.failurePolicy: Required value", "spec.matchConstraints: Required value"},
		},
		{
			Name: "matchConstraints without resourceRules",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.MatchConstraints.ResourceRules = nil
			}),
			Want: []string{"spec.matchConstraints.resourceRules: Required value"},
		},
		{
			Name: "matchConstraints not defaulted, a bad rule and resource name",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				m := p.Spec.MatchConstraints
				m.MatchPolicy, m.NamespaceSelector, m.ObjectSelector = nil, nil, nil
				m.ResourceRules[0].ResourceNames = []string{"a/b", "x", "x"}
				m.ExcludeResourceRules = []admissionregistrationv1.NamedRuleWithOperations{{}}
			}),
			Want: []string{
				"spec.matchConstraints.excludeResourceRules[0].apiGroups: Required value", "spec.matchConstraints.excludeResourceRules[0].apiVersions: Required value",
				"spec.matchConstraints.excludeResourceRules[0].operations: Required value", "spec.matchConstraints.excludeResourceRules[0].resources: Required value",
				"spec.matchConstraints.matchPolicy: Required value", "spec.matchConstraints.namespaceSelector: Required value",
				"spec.matchConstraints.objectSelector: Required value",
				"spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value", "spec.matchConstraints.resourceRules[0].resourceNames[2]: Duplicate value",
			},
		},
		{
			Name: "no validations and no audit annotations",
			Obj:  withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations = nil }),
			Want: []string{"spec.auditAnnotations: Required value", "spec.validations: Required value"},
		},
		{
			Name: "validations: does not compile, not boolean, empty, params without paramKind",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Validations = []admissionregistrationv1.Validation{
					{Expression: "object.x in [1, 2, "}, {Expression: "object.spec.replicas"}, {Expression: " "}, {Expression: "params.max > 1"},
				}
			}),
			Want: []string{"spec.validations[0].expression: Invalid value", "spec.validations[1].expression: Invalid value",
				"spec.validations[2].expression: Required value", "spec.validations[3].expression: Invalid value"},
		},
		{
			Name: "validation: messageExpression not a string, message with a line break, unknown reason",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				v := &p.Spec.Validations[0]
				v.MessageExpression, v.Message, v.Reason = "0 == 0", "too\nmany", ptr.To(metav1.StatusReasonConflict)
			}),
			Want: []string{"spec.validations[0].message: Invalid value", "spec.validations[0].messageExpression: Invalid value",
				"spec.validations[0].reason: Unsupported value"},
		},
		{
			Name: "variables: bad name, does not compile, used before defined",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "in", Expression: "114 + '514'"}, {Name: "b", Expression: "variables.c + 1"}, {Name: ""}}
			}),
			Want: []string{"spec.variables[0].expression: Invalid value", "spec.variables[0].name: Invalid value",
				"spec.variables[1].expression: Invalid value", "spec.variables[2].expression: Required value", "spec.variables[2].name: Required value"},
		},
		{
			Name: "audit annotations: not a string, duplicate key, bad key",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{
					{Key: "a", ValueExpression: "true"}, {Key: "a", ValueExpression: "'x'"}, {Key: "not valid!", ValueExpression: "'x'"}, {Key: "b"},
				}
			}),
			Want: []string{"spec.auditAnnotations[0].valueExpression: Invalid value", "spec.auditAnnotations[1].key: Duplicate value",
				"spec.auditAnnotations[2].key: Invalid value", "spec.auditAnnotations[3].valueExpression: Required value"},
		},
		{
			Name: "paramKind: bad apiVersion and kind",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "a/b/c", Kind: "Config_Map"}
			}),
			Want: []string{"spec.paramKind.apiVersion: Invalid value", "spec.paramKind.kind: Invalid value"},
		},
		{
			Name: "matchConditions: not boolean, params without paramKind",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "'x'"}, {Name: "b", Expression: "params != null"}}
			}),
			Want: []string{"spec.matchConditions[0].expression: Invalid value", "spec.matchConditions[1].expression: Invalid value"},
		},
		{
			Name: "failurePolicy unknown",
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.FailurePolicyType("Retry"))
			}),
			Want: []string{"spec.failurePolicy: Unsupported value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "validatingadmissionpolicies")
	registrytest.ValidateCreateAndUpdate(t, store, registrytest.ErrorPaths, validPolicy, tests)
}

// TestValidatePolicyMessages compares errors with upstream's
// validation_test.go, which checks their beginnings (CEL adds the source
// line and a caret after them).
func TestValidatePolicyMessages(t *testing.T) {
	tests := []struct {
		name   string
		policy *admissionregistrationv1.ValidatingAdmissionPolicy
		want   string
	}{
		{
			name: "validation does not compile",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Validations[0].Expression = "object.x in [1, 2, "
			}),
			want: `spec.validations[0].expression: Invalid value: "object.x in [1, 2, ": compilation failed: ERROR: <input>:1:20: Syntax error: missing ']' at '<EOF>`,
		},
		{
			name: "messageExpression not a string",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Validations[0].MessageExpression = "0 == 0"
			}),
			want: `spec.validations[0].messageExpression: Invalid value: "0 == 0": must evaluate to string`,
		},
		{
			name: "audit annotation not a string",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "true"}}
			}),
			want: `spec.auditAnnotations[0].valueExpression: Invalid value: "true": must evaluate to one of [string null_type]`,
		},
		{
			name: "variable does not compile",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "a", Expression: "114 + '514'"}}
			}),
			want: `spec.variables[0].expression: Invalid value: "114 + '514'": compilation failed: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(int, string)`,
		},
		{
			name: "undefined variable",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "foo", Expression: "1"}}
				p.Spec.Validations = append(p.Spec.Validations, admissionregistrationv1.Validation{Expression: "variables.replicas == 2"})
			}),
			want: `spec.validations[1].expression: Invalid value: "variables.replicas == 2": compilation failed: ERROR: <input>:1:10: undefined field 'replicas'`,
		},
		{
			name:   "no matchConstraints",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.MatchConstraints = nil }),
			want:   `spec.matchConstraints: Required value`,
		},
		{
			name:   "no validations",
			policy: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.Validations = nil }),
			want:   `spec.validations: Required value: validations or auditAnnotations must contain at least one item`,
		},
	}
	store := registrytest.REST(t, NewStorage, "validatingadmissionpolicies")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := store.CreateStrategy.Validate(context.Background(), tt.policy)
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tt.want) {
				t.Errorf("Validate: got %v, want a first error starting %q", errs, tt.want)
			}
		})
	}
}

// TestValidatePolicyUpdate: expressions an update keeps compile in the
// stored-expressions environment, and unchanged match conditions are not
// compiled again.
func TestValidatePolicyUpdate(t *testing.T) {
	badCondition := withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
		p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "'x'"}}
	})
	tests := []registrytest.Change[*admissionregistrationv1.ValidatingAdmissionPolicy]{
		{
			Name: "unchanged invalid matchCondition kept",
			Old:  badCondition,
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.MatchConditions = badCondition.Spec.MatchConditions
				p.Labels = map[string]string{"a": "b"}
			}),
			Want: []string{},
		},
		{
			Name: "paramKind added: matchConditions compiled again",
			Old:  badCondition,
			Obj: withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
				p.Spec.MatchConditions = badCondition.Spec.MatchConditions
				p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
			}),
			Want: []string{"spec.matchConditions[0].expression: Invalid value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "validatingadmissionpolicies")
	registrytest.ValidateUpdateChanges(t, store.UpdateStrategy, registrytest.ErrorPaths, tests)
}

func validMutatingPolicy() *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "labels", ResourceVersion: "1"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: validMatchResources(),
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"mutated": "true"}}}`,
				},
			}},
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}
}

func withMutatingPolicy(mutate func(p *admissionregistrationv1.MutatingAdmissionPolicy)) *admissionregistrationv1.MutatingAdmissionPolicy {
	p := validMutatingPolicy()
	mutate(p)
	return p
}

func TestValidateMutatingPolicy(t *testing.T) {
	tests := []registrytest.Change[*admissionregistrationv1.MutatingAdmissionPolicy]{
		{Name: "valid", Obj: validMutatingPolicy(), Want: []string{}},
		{
			Name: "valid: JSON patch with a variable and params",
			Obj: withMutatingPolicy(func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
				p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
				p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "value", Expression: "params.data.value"}}
				p.Spec.Mutations = []admissionregistrationv1.Mutation{{
					PatchType: admissionregistrationv1.PatchTypeJSONPatch,
					JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "add", path: "/metadata/labels/a", value: variables.value}]`},
				}}
				p.Spec.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
			}),
			Want: []string{},
		},
		{
			Name: "no mutations, no reinvocationPolicy, no matchConstraints",
			Obj: withMutatingPolicy(func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
				p.Spec.Mutations, p.Spec.ReinvocationPolicy, p.Spec.MatchConstraints = nil, "", nil
			}),
			Want: []string{"spec.matchConstraints: Required value", "spec.mutations: Required value", "spec.reinvocationPolicy: Required value"},
		},
		{
			Name: "DELETE cannot be mutated; unknown reinvocationPolicy",
			Obj: withMutatingPolicy(func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
				p.Spec.MatchConstraints.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
				p.Spec.ReinvocationPolicy = "Always"
			}),
			Want: []string{"spec.matchConstraints.resourceRules.operations: Unsupported value", "spec.reinvocationPolicy: Unsupported value"},
		},
		{
			Name: "mutations: unknown patchType, missing patches, both patches, expressions that do not compile or are not objects",
			Obj: withMutatingPolicy(func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
				apply, patch := &admissionregistrationv1.ApplyConfiguration{Expression: "1 < 2"}, &admissionregistrationv1.JSONPatch{Expression: "[JSONPatch{"}
				p.Spec.Mutations = []admissionregistrationv1.Mutation{
					{PatchType: "StrategicMerge"}, {},
					{PatchType: admissionregistrationv1.PatchTypeJSONPatch},
					{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration},
					{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: apply, JSONPatch: patch},
					{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: patch},
					{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{}},
				}
			}),
			Want: []string{
				"spec.mutations[0].patchType: Unsupported value", "spec.mutations[1].patchType: Required value",
				"spec.mutations[2].jsonPatch: Required value", "spec.mutations[3].applyConfiguration: Required value",
				"spec.mutations[4].applyConfiguration.expression: Invalid value", "spec.mutations[4].jsonPatch: Invalid value",
				"spec.mutations[5].jsonPatch.expression: Invalid value", "spec.mutations[6].jsonPatch.expression: Required value",
			},
		},
	}
	store := registrytest.REST(t, NewStorage, "mutatingadmissionpolicies")
	registrytest.ValidateChanges(t, store.CreateStrategy, registrytest.ErrorPaths, tests)
	t.Run("apply configuration not an object: upstream's message", func(t *testing.T) {
		p := withMutatingPolicy(func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
			p.Spec.Mutations[0].ApplyConfiguration.Expression = "1 < 2"
		})
		errs := store.CreateStrategy.Validate(context.Background(), p)
		want := `spec.mutations[0].applyConfiguration.expression: Invalid value: "1 < 2": must evaluate to Object`
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
			t.Errorf("Validate: got %v, want one error starting %q", errs, want)
		}
	})
}
