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

package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// resourceRules match CREATEs of resources in group/v1.
func resourceRules(group string, resources ...string) *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: rule(group, resources...)[0]}}}
}

// inPolicyNamespaces matches the namespaces labelled policy=yes.
var inPolicyNamespaces = &admissionregistrationv1.MatchResources{NamespaceSelector: selector("policy")}

// until retries create until check accepts what it returns (a new policy
// applies once the admission plugin has compiled it) or the deadline.
func until[T any](t *testing.T, create func(context.Context) (T, error), check func(T, error) bool) (T, error) {
	t.Helper()
	var got T
	var err error
	if waitErr := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = create(ctx)
		return check(got, err), nil
	}); waitErr != nil {
		t.Fatalf("the policy never applied: last result %v, %v", got, err)
	}
	return got, err
}

// TestValidatingAdmissionPolicy: a policy with a binding and params denies
// with its message, in the namespaces the binding selects.
func TestValidatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	ctx := t.Context()
	mustCreate := mustSucceed(t)
	deny := admissionregistrationv1.DenyAction
	mustCreate(client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: labelled("limited", "policy")}, metav1.CreateOptions{}))
	mustCreate(client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Data: map[string]string{"max": "2"}}, metav1.CreateOptions{}))
	policies := client.AdmissionregistrationV1()
	mustCreate(policies.ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "max-keys"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: resourceRules("", "configmaps"),
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "!has(object.data) || object.data.size() <= int(params.data.max)",
				MessageExpression: "'at most ' + params.data.max + ' keys'",
			}},
		},
	}, metav1.CreateOptions{}))
	mustCreate(policies.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "max-keys-in-limited"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "max-keys",
			ParamRef:          &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "default", ParameterNotFoundAction: &deny},
			MatchResources:    inPolicyNamespaces,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}, metav1.CreateOptions{}))

	// Until the plugin's informer for the param kind has synced, the
	// binding denies with "paramKind kind ... not yet synced to use for
	// admission", as upstream's does: wait for the policy's own answer.
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"a": "1", "b": "2", "c": "3"}}
	_, err := until(t, func(ctx context.Context) (*corev1.ConfigMap, error) {
		return client.CoreV1().ConfigMaps("limited").Create(ctx, big, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}, func(_ *corev1.ConfigMap, err error) bool {
		return err != nil && !strings.Contains(err.Error(), "not yet synced")
	})
	checkStatus(t, err, 422, `configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-in-limited' denied request: at most 2 keys`)
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Errorf("outside the bound namespaces: %v", err)
	}
	small := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}, Data: map[string]string{"a": "1"}}
	if _, err := client.CoreV1().ConfigMaps("limited").Create(ctx, small, metav1.CreateOptions{}); err != nil {
		t.Errorf("within the limit: %v", err)
	}
}

// TestValidatingAdmissionPolicyTypeChecking: expressions that do not
// type-check against the kinds a policy matches are reported in its
// status, for built-in types and custom resources.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.WithCRDs(crdPath))
	policies := kubernetes.NewForConfigOrDie(s.Config).AdmissionregistrationV1().ValidatingAdmissionPolicies()
	ctx := t.Context()
	mustCreate := mustSucceed(t)
	for _, tc := range []struct {
		name, group, resource, expression, wantWarning string
	}{
		{"deployments", "apps", "deployments", "object.spec.replicaz > 1", "undefined field 'replicaz'"},
		{"crontabs", "stable.example.com", "crontabs", "object.spec.imagez == ''", "undefined field 'imagez'"},
		{"sound", "apps", "deployments", "object.spec.replicas > 1", ""},
	} {
		mustCreate(policies.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: tc.name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: resourceRules(tc.group, tc.resource),
				Validations:      []admissionregistrationv1.Validation{{Expression: tc.expression}},
			},
		}, metav1.CreateOptions{}))
		got, _ := until(t, func(ctx context.Context) (*admissionregistrationv1.ValidatingAdmissionPolicy, error) {
			return policies.Get(ctx, tc.name, metav1.GetOptions{})
		}, func(p *admissionregistrationv1.ValidatingAdmissionPolicy, err error) bool {
			return err == nil && p.Status.ObservedGeneration == p.Generation
		})
		var warnings []admissionregistrationv1.ExpressionWarning
		if got.Status.TypeChecking != nil {
			warnings = got.Status.TypeChecking.ExpressionWarnings
		}
		switch {
		case tc.wantWarning == "" && len(warnings) > 0:
			t.Errorf("%s: warnings %v, want none", tc.name, warnings)
		case tc.wantWarning != "" && (len(warnings) != 1 || warnings[0].FieldRef != "spec.validations[0].expression" || !strings.Contains(warnings[0].Warning, tc.wantWarning)):
			t.Errorf("%s: warnings %v, want one on spec.validations[0].expression with %q", tc.name, warnings, tc.wantWarning)
		}
	}
}

// TestMutatingAdmissionPolicy: a policy mutates what its binding selects.
func TestMutatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(s.Config)
	ctx := t.Context()
	mustCreate := mustSucceed(t)
	mustCreate(client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: labelled("mutated", "policy")}, metav1.CreateOptions{}))
	policies := client.AdmissionregistrationV1()
	mustCreate(policies.MutatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "add-label"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: resourceRules("", "configmaps"),
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: `Object{metadata: Object.metadata{labels: {"mutated": "by-policy"}}}`,
				},
			}},
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}, metav1.CreateOptions{}))
	mustCreate(policies.MutatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "add-label"},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "add-label", MatchResources: inPolicyNamespaces},
	}, metav1.CreateOptions{}))
	until(t, func(ctx context.Context) (*corev1.ConfigMap, error) {
		return client.CoreV1().ConfigMaps("mutated").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}, func(cm *corev1.ConfigMap, err error) bool { return err == nil && cm.Labels["mutated"] == "by-policy" })
	got, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	if err != nil || got.Labels["mutated"] != "" {
		t.Errorf("outside the bound namespaces: %v, labels %v; want no label", err, got.Labels)
	}
}

// mustSucceed returns a func that fails t on a create's error:
// mustCreate(client.Create(...)).
func mustSucceed(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
