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
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
)

// What webhooks and policies share: their rules and match conditions, the
// enums they draw from (sorted, as upstream's sets list them in messages),
// and the options of upstream's validation.

var (
	supportedFailurePolicies      = []string{string(admissionregistrationv1.Fail), string(admissionregistrationv1.Ignore)}
	supportedMatchPolicies        = []string{string(admissionregistrationv1.Equivalent), string(admissionregistrationv1.Exact)}
	supportedReinvocationPolicies = []string{string(admissionregistrationv1.IfNeededReinvocationPolicy), string(admissionregistrationv1.NeverReinvocationPolicy)}
	supportedScopes               = []string{string(admissionregistrationv1.AllScopes), string(admissionregistrationv1.ClusterScope), string(admissionregistrationv1.NamespacedScope)}
	supportedOperations           = []string{string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Connect),
		string(admissionregistrationv1.Create), string(admissionregistrationv1.Delete), string(admissionregistrationv1.Update)}
)

// maxMatchConditions is how many match conditions a webhook or policy may have.
const maxMatchConditions = 64

// options are upstream's validationOptions: what create requires and an
// update relaxes when the stored object did not meet it.
type options struct {
	ignoreMatchConditions                   bool
	allowParamsInMatchConditions            bool
	requireNoSideEffects                    bool
	requireRecognizedAdmissionReviewVersion bool
	requireUniqueWebhookNames               bool
	allowInvalidLabelValueInSelector        bool
	stored                                  storedExpressions
}

// storedExpressions are the CEL expressions of the object an update
// replaces: they compile in the stored-expressions environment.
type storedExpressions struct {
	matchConditions, validations, messages, auditAnnotations, applyConfigurations sets.Set[string]
}

func matchConditionExpressions(conditions []admissionregistrationv1.MatchCondition) sets.Set[string] {
	s := sets.New[string]()
	for _, c := range conditions {
		s.Insert(c.Expression)
	}
	return s
}

func hasWildcard[T ~string](values []T) bool { return slices.Contains(values, "*") }

// validateRuleWithOperations is upstream's, for webhook and policy rules.
func validateRuleWithOperations(r *admissionregistrationv1.RuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && hasWildcard(r.Operations) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(supportedOperations, string(op)) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), op, supportedOperations))
		}
	}
	return append(errs, validateRule(&r.Rule, p)...)
}

// validateRule is upstream's, with subresources allowed (as every caller allows them).
func validateRule(r *admissionregistrationv1.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && hasWildcard(r.APIGroups) {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// A group may be empty (the core group), a version may not.
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && hasWildcard(r.APIVersions) {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, version := range r.APIVersions {
		if version == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, validateResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !slices.Contains(supportedScopes, string(*r.Scope)) {
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, supportedScopes))
	}
	return errs
}

// validateResources is upstream's: "resource", "resource/subresource", and
// wildcards for either that do not overlap another entry.
func validateResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	resourcesWithWildcardSubresource := sets.New[string]() // x/*
	subresourcesWithWildcardResource := sets.New[string]() // */x
	hasDoubleWildcard, hasSingleWildcard, hasResourceWithoutSubresource := false, false, false
	for i, resSub := range resources {
		if resSub == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		hasDoubleWildcard = hasDoubleWildcard || resSub == "*/*"
		hasSingleWildcard = hasSingleWildcard || resSub == "*"
		res, sub, ok := strings.Cut(resSub, "/")
		if !ok {
			// As upstream: the last entry without a subresource decides.
			hasResourceWithoutSubresource = resSub != "*"
			continue
		}
		if resourcesWithWildcardSubresource.Has(res) {
			errs = append(errs, field.Invalid(p.Index(i), resSub, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, resSub)))
		}
		if subresourcesWithWildcardResource.Has(sub) {
			errs = append(errs, field.Invalid(p.Index(i), resSub, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, resSub)))
		}
		if sub == "*" {
			resourcesWithWildcardSubresource.Insert(res)
		}
		if res == "*" {
			subresourcesWithWildcardResource.Insert(sub)
		}
	}
	if len(resources) > 1 && hasDoubleWildcard {
		errs = append(errs, field.Invalid(p, resources, "if '*/*' is present, must not specify other resources"))
	}
	if hasSingleWildcard && hasResourceWithoutSubresource {
		errs = append(errs, field.Invalid(p, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// validateMatchConditions is upstream's: at most 64, names unique
// qualified names, expressions boolean CEL.
func validateMatchConditions(conditions []admissionregistrationv1.MatchCondition, opts options, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conditions) > maxMatchConditions {
		errs = append(errs, field.TooMany(p, len(conditions), maxMatchConditions))
	}
	names := sets.New[string]()
	for i, c := range conditions {
		errs = append(errs, validateMatchCondition(&c, opts, p.Index(i))...)
		if c.Name == "" {
			continue
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("name"), c.Name))
		}
		names.Insert(c.Name)
	}
	return errs
}

func validateMatchCondition(c *admissionregistrationv1.MatchCondition, opts options, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if expression := strings.TrimSpace(c.Expression); expression == "" {
		errs = append(errs, field.Required(p.Child("expression"), ""))
	} else {
		errs = append(errs, compile(statelessCompiler(), &matchconditions.MatchCondition{Expression: expression},
			plugincel.OptionalVariableDeclarations{HasParams: opts.allowParamsInMatchConditions, HasAuthorizer: true},
			envType(opts.stored.matchConditions, expression), p.Child("expression"))...)
	}
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg).WithOrigin("format=qualified-name"))
		}
	}
	return errs
}
