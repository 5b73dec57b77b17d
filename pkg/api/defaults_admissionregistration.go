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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// addAdmissionRegistrationDefaults registers the admissionregistration.k8s.io/v1
// defaults of upstream's pkg/apis/admissionregistration/v1 (defaults.go and
// its generated SetObjectDefaults_*). sideEffects and a paramRef's
// parameterNotFoundAction have no default in v1: validation requires them.
func addAdmissionRegistrationDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingWebhookConfiguration{}, func(obj any) {
		for i := range obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks {
			defaultValidatingWebhook(&obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[i])
		}
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingWebhookConfiguration{}, func(obj any) {
		for i := range obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks {
			defaultMutatingWebhook(&obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[i])
		}
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingAdmissionPolicy{}, func(obj any) {
		spec := &obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec
		defaultFailurePolicy(&spec.FailurePolicy)
		defaultMatchResources(spec.MatchConstraints)
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingAdmissionPolicy{}, func(obj any) {
		spec := &obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec
		defaultFailurePolicy(&spec.FailurePolicy)
		defaultMatchResources(spec.MatchConstraints)
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, func(obj any) {
		defaultMatchResources(obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
	})
	s.AddTypeDefaultingFunc(&admissionregistrationv1.MutatingAdmissionPolicyBinding{}, func(obj any) {
		defaultMatchResources(obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
	})
}

// admissionRegistrationDefaultedLists are the lists whose items
// addAdmissionRegistrationDefaults defaults.
var admissionRegistrationDefaultedLists = []runtime.Object{
	&admissionregistrationv1.ValidatingWebhookConfigurationList{}, &admissionregistrationv1.MutatingWebhookConfigurationList{},
	&admissionregistrationv1.ValidatingAdmissionPolicyList{}, &admissionregistrationv1.MutatingAdmissionPolicyList{},
	&admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}, &admissionregistrationv1.MutatingAdmissionPolicyBindingList{},
}

// webhookDefaults are the fields both kinds of webhook default alike.
type webhookDefaults struct {
	failurePolicy                     **admissionregistrationv1.FailurePolicyType
	matchPolicy                       **admissionregistrationv1.MatchPolicyType
	namespaceSelector, objectSelector **metav1.LabelSelector
	timeoutSeconds                    **int32
	clientConfig                      *admissionregistrationv1.WebhookClientConfig
	rules                             []admissionregistrationv1.RuleWithOperations
}

// apply is SetDefaults_ValidatingWebhook (the part SetDefaults_MutatingWebhook
// shares), then SetDefaults_ServiceReference and SetDefaults_Rule.
func (w webhookDefaults) apply() {
	defaultFailurePolicy(w.failurePolicy)
	if *w.matchPolicy == nil {
		*w.matchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	for _, selector := range []**metav1.LabelSelector{w.namespaceSelector, w.objectSelector} {
		if *selector == nil {
			*selector = &metav1.LabelSelector{}
		}
	}
	if *w.timeoutSeconds == nil {
		*w.timeoutSeconds = ptr.To[int32](10)
	}
	if svc := w.clientConfig.Service; svc != nil && svc.Port == nil {
		svc.Port = ptr.To[int32](443)
	}
	for i := range w.rules {
		defaultRule(&w.rules[i].Rule)
	}
}

func defaultValidatingWebhook(h *admissionregistrationv1.ValidatingWebhook) {
	webhookDefaults{&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector, &h.TimeoutSeconds, &h.ClientConfig, h.Rules}.apply()
}

// defaultMutatingWebhook also defaults reinvocationPolicy to Never.
func defaultMutatingWebhook(h *admissionregistrationv1.MutatingWebhook) {
	webhookDefaults{&h.FailurePolicy, &h.MatchPolicy, &h.NamespaceSelector, &h.ObjectSelector, &h.TimeoutSeconds, &h.ClientConfig, h.Rules}.apply()
	if h.ReinvocationPolicy == nil {
		h.ReinvocationPolicy = ptr.To(admissionregistrationv1.NeverReinvocationPolicy)
	}
}

func defaultFailurePolicy(p **admissionregistrationv1.FailurePolicyType) {
	if *p == nil {
		*p = ptr.To(admissionregistrationv1.Fail)
	}
}

// defaultRule is SetDefaults_Rule: a rule matches every scope unless set.
func defaultRule(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		r.Scope = ptr.To(admissionregistrationv1.AllScopes)
	}
}

// defaultMatchResources is SetDefaults_MatchResources and the rules' defaults,
// for a policy's matchConstraints or a binding's matchResources.
func defaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for _, rules := range [][]admissionregistrationv1.NamedRuleWithOperations{m.ResourceRules, m.ExcludeResourceRules} {
		for i := range rules {
			defaultRule(&rules[i].Rule)
		}
	}
}
