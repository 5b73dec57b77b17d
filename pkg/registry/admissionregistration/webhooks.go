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
	"fmt"
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/utils/ptr"
)

var (
	// acceptedAdmissionReviewVersions are the AdmissionReview versions a webhook must accept one of.
	acceptedAdmissionReviewVersions = []string{"v1", "v1beta1"}
	// noSideEffectClasses are the side effects v1 webhooks may declare
	// (Unknown and Some are v1beta1's, and only kept by updates).
	noSideEffectClasses        = []string{string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun)}
	supportedSideEffectClasses = []string{string(admissionregistrationv1.SideEffectClassNone), string(admissionregistrationv1.SideEffectClassNoneOnDryRun),
		string(admissionregistrationv1.SideEffectClassSome), string(admissionregistrationv1.SideEffectClassUnknown)}
)

// webhook is what validation reads of a ValidatingWebhook or a
// MutatingWebhook (reinvocationPolicy: the mutating one only).
type webhook struct {
	mutating                          bool
	name                              string
	clientConfig                      admissionregistrationv1.WebhookClientConfig
	rules                             []admissionregistrationv1.RuleWithOperations
	failurePolicy                     *admissionregistrationv1.FailurePolicyType
	matchPolicy                       *admissionregistrationv1.MatchPolicyType
	namespaceSelector, objectSelector *metav1.LabelSelector
	sideEffects                       *admissionregistrationv1.SideEffectClass
	timeoutSeconds                    *int32
	admissionReviewVersions           []string
	reinvocationPolicy                *admissionregistrationv1.ReinvocationPolicyType
	matchConditions                   []admissionregistrationv1.MatchCondition
}

func validatingWebhooks(hooks []admissionregistrationv1.ValidatingWebhook) []webhook {
	var out []webhook
	for _, h := range hooks {
		out = append(out, webhook{
			name: h.Name, clientConfig: h.ClientConfig, rules: h.Rules, failurePolicy: h.FailurePolicy, matchPolicy: h.MatchPolicy,
			namespaceSelector: h.NamespaceSelector, objectSelector: h.ObjectSelector, sideEffects: h.SideEffects, timeoutSeconds: h.TimeoutSeconds,
			admissionReviewVersions: h.AdmissionReviewVersions, matchConditions: h.MatchConditions,
		})
	}
	return out
}

func mutatingWebhooks(hooks []admissionregistrationv1.MutatingWebhook) []webhook {
	var out []webhook
	for _, h := range hooks {
		out = append(out, webhook{
			mutating: true,
			name:     h.Name, clientConfig: h.ClientConfig, rules: h.Rules, failurePolicy: h.FailurePolicy, matchPolicy: h.MatchPolicy,
			namespaceSelector: h.NamespaceSelector, objectSelector: h.ObjectSelector, sideEffects: h.SideEffects, timeoutSeconds: h.TimeoutSeconds,
			admissionReviewVersions: h.AdmissionReviewVersions, reinvocationPolicy: h.ReinvocationPolicy, matchConditions: h.MatchConditions,
		})
	}
	return out
}

// webhookCreateOptions are what upstream's Validate*WebhookConfiguration require.
var webhookCreateOptions = options{requireNoSideEffects: true, requireRecognizedAdmissionReviewVersion: true, requireUniqueWebhookNames: true}

// webhookUpdateOptions are upstream's Validate*WebhookConfigurationUpdate
// options: a requirement the stored webhooks did not meet is not enforced,
// and unchanged match conditions are not compiled again.
func webhookUpdateOptions(hooks, old []webhook) options {
	opts := options{
		ignoreMatchConditions:                   len(hooks) == len(old),
		requireNoSideEffects:                    true,
		requireRecognizedAdmissionReviewVersion: true,
		requireUniqueWebhookNames:               true,
		stored:                                  storedExpressions{matchConditions: sets.New[string]()},
	}
	names := sets.New[string]()
	for i, h := range old {
		if opts.ignoreMatchConditions && !reflect.DeepEqual(hooks[i].matchConditions, h.matchConditions) {
			opts.ignoreMatchConditions = false
		}
		if h.sideEffects == nil || !slices.Contains(noSideEffectClasses, string(*h.sideEffects)) {
			opts.requireNoSideEffects = false
		}
		if len(h.admissionReviewVersions) > 0 && !slices.ContainsFunc(h.admissionReviewVersions, isAcceptedAdmissionReviewVersion) {
			opts.requireRecognizedAdmissionReviewVersion = false
		}
		if names.Has(h.name) {
			opts.requireUniqueWebhookNames = false
		}
		names.Insert(h.name)
		for _, selector := range []*metav1.LabelSelector{h.namespaceSelector, h.objectSelector} {
			if selector != nil && len(metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				opts.allowInvalidLabelValueInSelector = true
			}
		}
		opts.stored.matchConditions = opts.stored.matchConditions.Union(matchConditionExpressions(h.matchConditions))
	}
	return opts
}

func isAcceptedAdmissionReviewVersion(v string) bool {
	return slices.Contains(acceptedAdmissionReviewVersions, v)
}

// validateWebhooks is upstream's validate*WebhookConfiguration, less the metadata.
func validateWebhooks(hooks []webhook, opts options) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(&hooks[i], opts, p)...)
		errs = append(errs, validateAdmissionReviewVersions(hooks[i].admissionReviewVersions, opts.requireRecognizedAdmissionReviewVersion, p.Child("admissionReviewVersions"))...)
		if name := hooks[i].name; opts.requireUniqueWebhookNames && name != "" {
			if names.Has(name) {
				errs = append(errs, field.Duplicate(p.Child("name"), name))
			}
			names.Insert(name)
		}
	}
	return errs
}

// validateWebhook is upstream's validateValidatingWebhook and validateMutatingWebhook.
func validateWebhook(h *webhook, opts options, p *field.Path) field.ErrorList {
	// The name must be fully qualified.
	errs := utilvalidation.IsFullyQualifiedName(p.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, validateRuleWithOperations(&h.rules[i], p.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil && !slices.Contains(supportedFailurePolicies, string(*h.failurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *h.failurePolicy, supportedFailurePolicies))
	}
	if h.matchPolicy != nil && !slices.Contains(supportedMatchPolicies, string(*h.matchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *h.matchPolicy, supportedMatchPolicies))
	}
	allowedSideEffects := supportedSideEffectClasses
	if opts.requireNoSideEffects {
		allowedSideEffects = noSideEffectClasses
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), fmt.Sprintf("must specify one of %v", strings.Join(allowedSideEffects, ", "))))
	} else if !slices.Contains(allowedSideEffects, string(*h.sideEffects)) {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *h.sideEffects, allowedSideEffects))
	}
	if h.timeoutSeconds != nil && (*h.timeoutSeconds > 30 || *h.timeoutSeconds < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *h.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector}
	if h.namespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.namespaceSelector, selectorOpts, p.Child("namespaceSelector"))...)
	}
	if h.objectSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.objectSelector, selectorOpts, p.Child("objectSelector"))...)
	}
	if h.mutating && h.reinvocationPolicy != nil && !slices.Contains(supportedReinvocationPolicies, string(*h.reinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *h.reinvocationPolicy, supportedReinvocationPolicies))
	}
	errs = append(errs, validateClientConfig(&h.clientConfig, p.Child("clientConfig"))...)
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(h.matchConditions, opts, p.Child("matchConditions"))...)
	}
	return errs
}

// validateClientConfig: exactly one of an https URL and a service.
func validateClientConfig(cc *admissionregistrationv1.WebhookClientConfig, p *field.Path) field.ErrorList {
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		return field.ErrorList{field.Required(p, "exactly one of url or service is required")}
	case cc.URL != nil:
		return webhookutil.ValidateWebhookURL(p.Child("url"), *cc.URL, true)
	default:
		// As upstream, which passes the name where ValidateWebhookService
		// takes the namespace and the namespace where it takes the name: a
		// missing name is reported at service.namespace and the other way round.
		// An unset port (never after defaulting) is 0, as upstream's conversion makes it.
		svc := cc.Service
		return webhookutil.ValidateWebhookService(p.Child("service"), svc.Name, svc.Namespace, svc.Path, ptr.Deref(svc.Port, 0))
	}
}

// validateAdmissionReviewVersions is upstream's: at least one, no
// duplicates, DNS labels, and (unless an update keeps an old list) one
// this server sends.
func validateAdmissionReviewVersions(versions []string, requireRecognized bool, p *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(p, fmt.Sprintf("must specify one of %v", strings.Join(acceptedAdmissionReviewVersions, ", ")))}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
	}
	if requireRecognized && !slices.ContainsFunc(versions, isAcceptedAdmissionReviewVersion) {
		errs = append(errs, field.Invalid(p, versions, fmt.Sprintf("must include at least one of %v", strings.Join(acceptedAdmissionReviewVersions, ", "))))
	}
	return errs
}
