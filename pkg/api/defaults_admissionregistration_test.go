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

package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

const admissionGroupVersion = `"apiVersion":"admissionregistration.k8s.io/v1"`

// ruleJSON is a webhook or policy rule without a scope; defaultedRule is it defaulted.
const ruleJSON = `{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}`

func defaultedRule() admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
			Scope: ptr.To(admissionregistrationv1.AllScopes)},
	}
}

func TestDecodeWebhookDefaults(t *testing.T) {
	defaulted := admissionregistrationv1.ValidatingWebhook{
		Name: "v.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "default", Name: "hook", Port: ptr.To[int32](443)}},
		Rules:             []admissionregistrationv1.RuleWithOperations{defaultedRule()},
		FailurePolicy:     ptr.To(admissionregistrationv1.Fail),
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector: &metav1.LabelSelector{},
		ObjectSelector:    &metav1.LabelSelector{},
		TimeoutSeconds:    ptr.To[int32](10),
	}
	tests := []struct {
		name    string
		webhook string
		want    admissionregistrationv1.ValidatingWebhook
	}{
		{
			name:    "everything defaulted, sideEffects left unset",
			webhook: `{"name":"v.example.com","clientConfig":{"service":{"namespace":"default","name":"hook"}},"rules":[` + ruleJSON + `]}`,
			want:    defaulted,
		},
		{
			name: "explicit values kept",
			webhook: `{"name":"v.example.com","clientConfig":{"url":"https://example.com"},"failurePolicy":"Ignore","matchPolicy":"Exact",
				"namespaceSelector":{"matchLabels":{"a":"b"}},"objectSelector":{"matchLabels":{"c":"d"}},"timeoutSeconds":3,"sideEffects":"None",
				"rules":[{"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],"resources":["*"],"scope":"Namespaced"}]}`,
			want: admissionregistrationv1.ValidatingWebhook{
				Name:         "v.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com")},
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"},
						Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
				}},
				FailurePolicy:     ptr.To(admissionregistrationv1.Ignore),
				MatchPolicy:       ptr.To(admissionregistrationv1.Exact),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"c": "d"}},
				TimeoutSeconds:    ptr.To[int32](3),
				SideEffects:       ptr.To(admissionregistrationv1.SideEffectClassNone),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, admissionregistrationv1.SchemeGroupVersion,
				`{`+admissionGroupVersion+`,"kind":"ValidatingWebhookConfiguration","metadata":{"name":"v"},"webhooks":[`+tt.webhook+`]}`)
			if diff := cmp.Diff([]admissionregistrationv1.ValidatingWebhook{tt.want}, obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks); diff != "" {
				t.Errorf("webhooks (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("mutating: reinvocationPolicy Never too", func(t *testing.T) {
		obj := decodeDefaulted(t, admissionregistrationv1.SchemeGroupVersion,
			`{`+admissionGroupVersion+`,"kind":"MutatingWebhookConfiguration","metadata":{"name":"m"},"webhooks":[
			{"name":"v.example.com","clientConfig":{"service":{"namespace":"default","name":"hook"}},"rules":[`+ruleJSON+`]}]}`)
		want := admissionregistrationv1.MutatingWebhook{
			Name: defaulted.Name, ClientConfig: defaulted.ClientConfig, Rules: defaulted.Rules, FailurePolicy: defaulted.FailurePolicy,
			MatchPolicy: defaulted.MatchPolicy, NamespaceSelector: defaulted.NamespaceSelector, ObjectSelector: defaulted.ObjectSelector,
			TimeoutSeconds: defaulted.TimeoutSeconds, ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		}
		if diff := cmp.Diff([]admissionregistrationv1.MutatingWebhook{want}, obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks); diff != "" {
			t.Errorf("webhooks (-want +got):\n%s", diff)
		}
	})
}

// defaultedMatchResources is matchResourcesJSON defaulted.
const matchResourcesJSON = `{"resourceRules":[` + ruleJSON + `],"excludeResourceRules":[` + ruleJSON + `]}`

func defaultedMatchResources() *admissionregistrationv1.MatchResources {
	rule := admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: defaultedRule()}
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector:    &metav1.LabelSelector{},
		ObjectSelector:       &metav1.LabelSelector{},
		ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{rule},
		ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule},
		MatchPolicy:          ptr.To(admissionregistrationv1.Equivalent),
	}
}

func TestDecodePolicyDefaults(t *testing.T) {
	fail := ptr.To(admissionregistrationv1.Fail)
	tests := []struct {
		name string
		data string
		// spec returns the decoded object's spec, to compare with want.
		spec func(runtime.Object) any
		want any
	}{
		{
			name: "validating policy: failurePolicy Fail, matchConstraints defaulted",
			data: `"kind":"ValidatingAdmissionPolicy","spec":{"matchConstraints":` + matchResourcesJSON + `}`,
			spec: func(obj runtime.Object) any { return obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec },
			want: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: fail, MatchConstraints: defaultedMatchResources()},
		},
		{
			name: "validating policy: no matchConstraints stays none",
			data: `"kind":"ValidatingAdmissionPolicy","spec":{"failurePolicy":"Ignore"}`,
			spec: func(obj runtime.Object) any { return obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec },
			want: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Ignore)},
		},
		{
			name: "mutating policy: failurePolicy Fail, matchConstraints defaulted, no reinvocationPolicy",
			data: `"kind":"MutatingAdmissionPolicy","spec":{"matchConstraints":` + matchResourcesJSON + `}`,
			spec: func(obj runtime.Object) any { return obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec },
			want: admissionregistrationv1.MutatingAdmissionPolicySpec{FailurePolicy: fail, MatchConstraints: defaultedMatchResources()},
		},
		{
			name: "validating binding: matchResources defaulted, paramRef left alone",
			data: `"kind":"ValidatingAdmissionPolicyBinding","spec":{"policyName":"p","paramRef":{"name":"x"},"matchResources":` + matchResourcesJSON + `}`,
			spec: func(obj runtime.Object) any {
				return obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec
			},
			want: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: &admissionregistrationv1.ParamRef{Name: "x"},
				MatchResources: defaultedMatchResources()},
		},
		{
			name: "mutating binding: matchResources defaulted",
			data: `"kind":"MutatingAdmissionPolicyBinding","spec":{"policyName":"p","matchResources":` + matchResourcesJSON + `}`,
			spec: func(obj runtime.Object) any {
				return obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec
			},
			want: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p", MatchResources: defaultedMatchResources()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, admissionregistrationv1.SchemeGroupVersion, `{`+admissionGroupVersion+`,"metadata":{"name":"p"},`+tt.data+`}`)
			if diff := cmp.Diff(tt.want, tt.spec(obj)); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeAdmissionRegistrationListDefaults(t *testing.T) {
	obj := decodeDefaulted(t, admissionregistrationv1.SchemeGroupVersion, `{`+admissionGroupVersion+`,"kind":"ValidatingAdmissionPolicyList","items":[
		{"metadata":{"name":"a"},"spec":{}}]}`)
	if got := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyList).Items[0].Spec.FailurePolicy; got == nil || *got != admissionregistrationv1.Fail {
		t.Errorf("item failurePolicy: got %v, want %q", got, admissionregistrationv1.Fail)
	}
}
