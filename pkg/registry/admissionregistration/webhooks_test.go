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
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validRule is a webhook rule on pods, as defaulting leaves it.
func validRule() admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "pods/status"},
			Scope: ptr.To(admissionregistrationv1.AllScopes)},
	}
}

// validWebhook is a defaulted validating webhook; mutate changes it before
// validating and mutating configurations are made of it.
func validWebhook() admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name: "pods.example.com",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: "default", Name: "hook", Path: ptr.To("/validate"), Port: ptr.To[int32](443)},
		},
		Rules:                   []admissionregistrationv1.RuleWithOperations{validRule()},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		ObjectSelector:          &metav1.LabelSelector{},
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](10),
		AdmissionReviewVersions: []string{"v1"},
		MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "not-kube-system", Expression: `request.namespace != "kube-system"`}},
	}
}

func validatingConfiguration(hooks ...admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks", ResourceVersion: "1"}, Webhooks: hooks}
}

// mutatingConfiguration has the mutating twins of hooks (reinvocationPolicy Never).
func mutatingConfiguration(hooks ...admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.MutatingWebhookConfiguration {
	c := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hooks", ResourceVersion: "1"}}
	for _, h := range hooks {
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: h.Name, ClientConfig: h.ClientConfig, Rules: h.Rules, FailurePolicy: h.FailurePolicy, MatchPolicy: h.MatchPolicy,
			NamespaceSelector: h.NamespaceSelector, ObjectSelector: h.ObjectSelector, SideEffects: h.SideEffects,
			TimeoutSeconds: h.TimeoutSeconds, AdmissionReviewVersions: h.AdmissionReviewVersions, MatchConditions: h.MatchConditions,
			ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		})
	}
	return c
}

func withWebhook(mutate func(h *admissionregistrationv1.ValidatingWebhook)) admissionregistrationv1.ValidatingWebhook {
	h := validWebhook()
	mutate(&h)
	return h
}

// webhookKinds are the two configurations: each test body runs on both.
var webhookKinds = []struct {
	resource string
	build    func(hooks ...admissionregistrationv1.ValidatingWebhook) runtime.Object
}{
	{"validatingwebhookconfigurations", func(hooks ...admissionregistrationv1.ValidatingWebhook) runtime.Object {
		return validatingConfiguration(hooks...)
	}},
	{"mutatingwebhookconfigurations", func(hooks ...admissionregistrationv1.ValidatingWebhook) runtime.Object {
		return mutatingConfiguration(hooks...)
	}},
}

func TestValidateWebhooks(t *testing.T) {
	tests := []struct {
		name  string
		hooks []admissionregistrationv1.ValidatingWebhook
		want  []string
	}{
		{name: "valid", hooks: []admissionregistrationv1.ValidatingWebhook{validWebhook()}, want: []string{}},
		{
			name: "valid: url, no selectors, NoneOnDryRun, v1beta1 reviews, two hooks",
			hooks: []admissionregistrationv1.ValidatingWebhook{validWebhook(), withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.Name = "other.example.com"
				h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://hook.example.com:8443/validate")}
				h.NamespaceSelector, h.ObjectSelector = nil, nil
				h.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun)
				h.AdmissionReviewVersions = []string{"v2", "v1beta1"}
			})},
			want: []string{},
		},
		{name: "no webhooks", want: []string{}},
		{
			name:  "missing sideEffects",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.SideEffects = nil })},
			want:  []string{"webhooks[0].sideEffects: Required value"},
		},
		{
			name: "sideEffects Some (v1beta1's)",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
			})},
			want: []string{"webhooks[0].sideEffects: Unsupported value"},
		},
		{
			name: "url with a fragment, a query and user info",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://user@example.com/hook?x=1#frag")}
			})},
			want: []string{"webhooks[0].clientConfig.url: Invalid value", "webhooks[0].clientConfig.url: Invalid value", "webhooks[0].clientConfig.url: Invalid value"},
		},
		{
			name: "http url without a host",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("http:///hook")}
			})},
			want: []string{"webhooks[0].clientConfig.url: Invalid value", "webhooks[0].clientConfig.url: Invalid value"},
		},
		{
			name: "both url and service",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ClientConfig.URL = ptr.To("https://example.com")
			})},
			want: []string{"webhooks[0].clientConfig: Required value"},
		},
		{
			name:  "neither url nor service",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.ClientConfig.Service = nil })},
			want:  []string{"webhooks[0].clientConfig: Required value"},
		},
		{
			name: "service: no name (reported at namespace, as upstream), bad port and path",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ClientConfig.Service.Name, h.ClientConfig.Service.Port, h.ClientConfig.Service.Path = "", ptr.To[int32](0), ptr.To("validate")
			})},
			want: []string{"webhooks[0].clientConfig.service.namespace: Required value", "webhooks[0].clientConfig.service.path: Invalid value",
				"webhooks[0].clientConfig.service.port: Invalid value"},
		},
		{
			name: "name not fully qualified, enums unknown, timeout too long",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.Name = "example.com"
				h.FailurePolicy = ptr.To(admissionregistrationv1.FailurePolicyType("Retry"))
				h.MatchPolicy = ptr.To(admissionregistrationv1.MatchPolicyType("Fuzzy"))
				h.TimeoutSeconds = ptr.To[int32](31)
			})},
			want: []string{"webhooks[0].failurePolicy: Unsupported value", "webhooks[0].matchPolicy: Unsupported value",
				"webhooks[0].name: Invalid value", "webhooks[0].timeoutSeconds: Invalid value"},
		},
		{
			name:  "duplicate names",
			hooks: []admissionregistrationv1.ValidatingWebhook{validWebhook(), validWebhook()},
			want:  []string{"webhooks[1].name: Duplicate value"},
		},
		{
			name: "admissionReviewVersions: none",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.AdmissionReviewVersions = nil
			})},
			want: []string{"webhooks[0].admissionReviewVersions: Required value"},
		},
		{
			name: "admissionReviewVersions: none known, a duplicate, not a label",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.AdmissionReviewVersions = []string{"v2", "v2", "V3"}
			})},
			want: []string{"webhooks[0].admissionReviewVersions: Invalid value", "webhooks[0].admissionReviewVersions[1]: Invalid value",
				"webhooks[0].admissionReviewVersions[2]: Invalid value"},
		},
		{
			name: "rules: no operations, unknown scope, '*' with other groups, versions and resources",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.Rules = []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"*", "apps"}, APIVersions: []string{"*", ""}, Resources: []string{"*", "pods"},
					Scope: ptr.To(admissionregistrationv1.ScopeType("Global")),
				}}}
			})},
			want: []string{"webhooks[0].rules[0].apiGroups: Invalid value", "webhooks[0].rules[0].apiVersions: Invalid value",
				"webhooks[0].rules[0].apiVersions[1]: Required value", "webhooks[0].rules[0].operations: Required value",
				"webhooks[0].rules[0].resources: Invalid value", "webhooks[0].rules[0].scope: Unsupported value"},
		},
		{
			name: "rules: unknown operation, overlapping subresource wildcards",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.Rules[0].Operations = []admissionregistrationv1.OperationType{"PATCH"}
				h.Rules[0].Resources = []string{"pods/*", "pods/status", "*/scale", "deployments/scale", ""}
			})},
			want: []string{"webhooks[0].rules[0].operations[0]: Unsupported value", "webhooks[0].rules[0].resources[1]: Invalid value",
				"webhooks[0].rules[0].resources[3]: Invalid value", "webhooks[0].rules[0].resources[4]: Required value"},
		},
		{
			name: "selector with an invalid operator",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
			})},
			want: []string{"webhooks[0].objectSelector.matchExpressions[0].operator: Invalid value"},
		},
		{
			name: "matchConditions: does not compile, not boolean, no name, duplicate name",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.MatchConditions = []admissionregistrationv1.MatchCondition{
					{Name: "a", Expression: "object.x in [1, 2,"},
					{Name: "a", Expression: "6"},
					{Expression: "true"},
					{Name: "not a name!", Expression: "params.x"},
					{Name: "b", Expression: "  "},
				}
			})},
			want: []string{"webhooks[0].matchConditions[0].expression: Invalid value", "webhooks[0].matchConditions[1].expression: Invalid value",
				"webhooks[0].matchConditions[1].name: Duplicate value", "webhooks[0].matchConditions[2].name: Required value",
				"webhooks[0].matchConditions[3].expression: Invalid value", "webhooks[0].matchConditions[3].name: Invalid value",
				"webhooks[0].matchConditions[4].expression: Required value"},
		},
		{
			name: "matchConditions: authorizer available",
			hooks: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: `authorizer.group('').resource('pods').check('get').allowed()`}}
			})},
			want: []string{},
		},
	}
	for _, kind := range webhookKinds {
		store := registrytest.REST(t, NewStorage, kind.resource)
		for _, tt := range tests {
			t.Run(kind.resource+"/"+tt.name, func(t *testing.T) {
				got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), kind.build(tt.hooks...)))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Validate errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestValidateMutatingWebhookReinvocationPolicy(t *testing.T) {
	c := mutatingConfiguration(validWebhook())
	c.Webhooks[0].ReinvocationPolicy = ptr.To(admissionregistrationv1.ReinvocationPolicyType("Always"))
	got := registrytest.ErrorPaths(registrytest.REST(t, NewStorage, "mutatingwebhookconfigurations").CreateStrategy.Validate(context.Background(), c))
	if diff := cmp.Diff([]string{"webhooks[0].reinvocationPolicy: Unsupported value"}, got); diff != "" {
		t.Errorf("Validate errors (-want +got):\n%s", diff)
	}
}

// TestValidateWebhookMessages compares whole errors with kube-apiserver's
// (upstream's validation_test.go checks their beginnings).
func TestValidateWebhookMessages(t *testing.T) {
	tests := []struct {
		name string
		hook admissionregistrationv1.ValidatingWebhook
		want string
	}{
		{
			name: "missing sideEffects",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.SideEffects = nil }),
			want: `webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`,
		},
		{
			name: "sideEffects Unknown",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassUnknown)
			}),
			want: `webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"`,
		},
		{
			name: "fragment",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://example.com/hook#bookmark")}
			}),
			want: `webhooks[0].clientConfig.url: Invalid value: "bookmark": fragments are not permitted in the URL`,
		},
		{
			name: "http",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("http://example.com")}
			}),
			want: `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
		},
		{
			name: "url and service",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.ClientConfig.URL = ptr.To("https://example.com") }),
			want: `webhooks[0].clientConfig: Required value: exactly one of url or service is required`,
		},
		{
			name: "timeout",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.TimeoutSeconds = ptr.To[int32](0) }),
			want: `webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds`,
		},
		{
			name: "two-segment name",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.Name = "example.com" }),
			want: `webhooks[0].name: Invalid value: "example.com": should be a domain with at least three segments separated by dots`,
		},
		{
			name: "no admissionReviewVersions",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) { h.AdmissionReviewVersions = nil }),
			want: `webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`,
		},
		{
			name: "matchCondition not boolean",
			hook: withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "6"}}
			}),
			want: `webhooks[0].matchConditions[0].expression: Invalid value: "6": must evaluate to bool but got int`,
		},
	}
	store := registrytest.REST(t, NewStorage, "validatingwebhookconfigurations")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := store.CreateStrategy.Validate(context.Background(), validatingConfiguration(tt.hook))
			if len(errs) != 1 {
				t.Fatalf("Validate: got %v, want one error", errs)
			}
			if got := errs[0].Error(); got != tt.want {
				t.Errorf("error: got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestValidateWebhookCompilationMessage: a match condition that does not
// compile fails with CEL's own message, after upstream's prefix.
func TestValidateWebhookCompilationMessage(t *testing.T) {
	hook := withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "object.x in [1, 2,"}}
	})
	errs := registrytest.REST(t, NewStorage, "validatingwebhookconfigurations").CreateStrategy.Validate(context.Background(), validatingConfiguration(hook))
	want := `webhooks[0].matchConditions[0].expression: Invalid value: "object.x in [1, 2,": compilation failed: ERROR: <input>:1:19: Syntax error: missing ']' at '<EOF>'`
	if len(errs) != 1 || !hasPrefix(errs[0].Error(), want) {
		t.Errorf("Validate: got %v, want one error starting %q", errs, want)
	}
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// TestValidateWebhookUpdate: as upstream, an update may keep what the stored
// configuration already had that create now refuses.
func TestValidateWebhookUpdate(t *testing.T) {
	some := withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
	})
	badCondition := withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
		h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "a", Expression: "6"}}
	})
	tests := []struct {
		name     string
		old, obj []admissionregistrationv1.ValidatingWebhook
		want     []string
	}{
		{name: "valid to valid", old: []admissionregistrationv1.ValidatingWebhook{validWebhook()}, obj: []admissionregistrationv1.ValidatingWebhook{validWebhook()}, want: []string{}},
		{name: "sideEffects Some kept", old: []admissionregistrationv1.ValidatingWebhook{some}, obj: []admissionregistrationv1.ValidatingWebhook{some}, want: []string{}},
		{
			name: "sideEffects Some introduced",
			old:  []admissionregistrationv1.ValidatingWebhook{validWebhook()}, obj: []admissionregistrationv1.ValidatingWebhook{some},
			want: []string{"webhooks[0].sideEffects: Unsupported value"},
		},
		{
			name: "unchanged invalid matchCondition not compiled again",
			old:  []admissionregistrationv1.ValidatingWebhook{badCondition},
			obj: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.MatchConditions = badCondition.MatchConditions
				h.TimeoutSeconds = ptr.To[int32](5)
			})},
			want: []string{},
		},
		{
			name: "changed matchConditions compiled",
			old:  []admissionregistrationv1.ValidatingWebhook{badCondition},
			obj: []admissionregistrationv1.ValidatingWebhook{withWebhook(func(h *admissionregistrationv1.ValidatingWebhook) {
				h.MatchConditions = append(badCondition.MatchConditions, admissionregistrationv1.MatchCondition{Name: "b", Expression: "true"})
			})},
			want: []string{"webhooks[0].matchConditions[0].expression: Invalid value"},
		},
		{
			name: "duplicate names kept",
			old:  []admissionregistrationv1.ValidatingWebhook{validWebhook(), validWebhook()},
			obj:  []admissionregistrationv1.ValidatingWebhook{validWebhook(), validWebhook()},
			want: []string{},
		},
	}
	for _, kind := range webhookKinds {
		store := registrytest.REST(t, NewStorage, kind.resource)
		for _, tt := range tests {
			t.Run(kind.resource+"/"+tt.name, func(t *testing.T) {
				got := registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), kind.build(tt.obj...), kind.build(tt.old...)))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}
