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
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The values upstream's pkg/apis/flowcontrol/validation accepts, sorted.
var (
	supportedDistinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	supportedSubjectKinds         = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
	supportedVerbs                = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
)

const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; "

// validateFlowSchema is upstream's ValidateFlowSchema (and, the same,
// ValidateFlowSchemaUpdate) but for the metadata, which the strategy
// checks: the spec, the fixed spec of a mandatory schema, and the status.
func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateFlowSchemaSpec(fs.Name, &fs.Spec, specPath)
	if mandatory, ok := mandatoryFlowSchemas[fs.Name]; ok && !apiequality.Semantic.DeepEqual(fs.Spec, mandatory.Spec) {
		errs = append(errs, field.Invalid(specPath, registry.Internal(fs.Spec), fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return append(errs, validateFlowSchemaStatus(&fs.Status)...)
}

// validateFlowSchemaSpec is upstream's ValidateFlowSchemaSpec.
func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	precedencePath := p.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(precedencePath, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(precedencePath, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(precedencePath, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if m := spec.DistinguisherMethod; m != nil && !slices.Contains(supportedDistinguisherMethods, string(m.Type)) {
		errs = append(errs, field.NotSupported(p.Child("distinguisherMethod", "type"), registry.Internal(m), supportedDistinguisherMethods))
	}
	levelPath := p.Child("priorityLevelConfiguration", "name")
	if level := spec.PriorityLevelConfiguration.Name; level != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(level, false) {
			errs = append(errs, field.Invalid(levelPath, level, msg))
		}
	} else {
		errs = append(errs, field.Required(levelPath, "must reference a priority level"))
	}
	for i := range spec.Rules {
		errs = append(errs, validateRule(&spec.Rules[i], p.Child("rules").Index(i))...)
	}
	return errs
}

// validateRule is upstream's ValidateFlowSchemaPolicyRulesWithSubjects.
func validateRule(rule *flowcontrolv1.PolicyRulesWithSubjects, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.Subjects) == 0 {
		errs = append(errs, field.Required(p.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rule.Subjects {
		errs = append(errs, validateSubject(&rule.Subjects[i], p.Child("subjects").Index(i))...)
	}
	if len(rule.ResourceRules) == 0 && len(rule.NonResourceRules) == 0 {
		errs = append(errs, field.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rule.ResourceRules {
		errs = append(errs, validateResourceRule(&rule.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range rule.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&rule.NonResourceRules[i], p.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

// validateSubject is upstream's ValidateFlowSchemaSubject: the member its
// kind names, and no other.
func validateSubject(s *flowcontrolv1.Subject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	userSet, groupSet, serviceAccountSet := s.User != nil, s.Group != nil, s.ServiceAccount != nil
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = validateServiceAccountSubject(s.ServiceAccount, p.Child("serviceAccount"))
		serviceAccountSet = false
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = field.ErrorList{field.Required(p.Child("user"), "user is required when subject kind is 'User'")}
		} else {
			errs = requiredName(s.User.Name, p.Child("user", "name"))
		}
		userSet = false
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = field.ErrorList{field.Required(p.Child("group"), "group is required when subject kind is 'Group'")}
		} else {
			errs = requiredName(s.Group.Name, p.Child("group", "name"))
		}
		groupSet = false
	default:
		return field.ErrorList{field.NotSupported(p.Child("kind"), s.Kind, supportedSubjectKinds)}
	}
	// Upstream checks the others in this order: serviceAccount, user, group.
	if serviceAccountSet {
		errs = append(errs, field.Forbidden(p.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
	}
	if userSet {
		errs = append(errs, field.Forbidden(p.Child("user"), "user is forbidden when subject kind is not 'User'"))
	}
	if groupSet {
		errs = append(errs, field.Forbidden(p.Child("group"), "group is forbidden when subject kind is not 'Group'"))
	}
	return errs
}

func requiredName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

// validateServiceAccountSubject is upstream's ValidateServiceAccountSubject.
func validateServiceAccountSubject(s *flowcontrolv1.ServiceAccountSubject, p *field.Path) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(p, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	errs := requiredName(s.Name, p.Child("name"))
	if s.Name != "" && s.Name != flowcontrolv1.NameAll {
		for _, msg := range apimachineryvalidation.ValidateServiceAccountName(s.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
		}
	}
	if s.Namespace == "" {
		return append(errs, field.Required(p.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apimachineryvalidation.ValidateNamespaceName(s.Namespace, false) {
		errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
	}
	return errs
}

// validateVerbs is the verbs' check of upstream's resource and
// non-resource rules: at least one, "*" alone, or known verbs.
func validateVerbs(verbs []string, p *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(p, "verbs must contain at least one value")}
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(p, verbs, "if '*' is present, must not specify other verbs")}
		}
	case slices.ContainsFunc(verbs, func(v string) bool { return !slices.Contains(supportedVerbs, v) }):
		return field.ErrorList{field.NotSupported(p, verbs, supportedVerbs)}
	}
	return nil
}

// validateNonResourceRule is upstream's ValidateFlowSchemaNonResourcePolicyRule.
func validateNonResourceRule(rule *flowcontrolv1.NonResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateVerbs(rule.Verbs, p.Child("verbs"))
	urlsPath := p.Child("nonResourceURLs")
	switch urls := rule.NonResourceURLs; {
	case len(urls) == 0:
		errs = append(errs, field.Required(urlsPath, "nonResourceURLs must contain at least one value"))
	case slices.Contains(urls, "*"):
		if len(urls) > 1 {
			errs = append(errs, field.Invalid(urlsPath, urls, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, url := range urls {
			if err := validateNonResourceURL(url, urlsPath.Index(i)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// validateResourceRule is upstream's ValidateFlowSchemaResourcePolicyRule.
func validateResourceRule(rule *flowcontrolv1.ResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateVerbs(rule.Verbs, p.Child("verbs"))
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	} else if len(rule.APIGroups) > 1 && slices.Contains(rule.APIGroups, "*") {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), rule.APIGroups, "if '*' is present, must not specify other api groups"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	} else if len(rule.Resources) > 1 && slices.Contains(rule.Resources, "*") {
		errs = append(errs, field.Invalid(p.Child("resources"), rule.Resources, "if '*' is present, must not specify other resources"))
	}
	namespacesPath := p.Child("namespaces")
	switch namespaces := rule.Namespaces; {
	case len(namespaces) == 0 && !rule.ClusterScope:
		errs = append(errs, field.Required(namespacesPath, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(namespaces, "*"):
		if len(namespaces) > 1 {
			errs = append(errs, field.Invalid(namespacesPath, namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range namespaces {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(namespacesPath.Index(i), ns, nsErrIntro+msg))
			}
		}
	}
	return errs
}

// validateNonResourceURL is upstream's ValidateNonResourceURLPath: "/", or
// a path from the root with no white-space, no "//", and a "*" only as
// its last segment.
func validateNonResourceURL(path string, p *field.Path) *field.Error {
	switch {
	case path == "":
		return field.Invalid(p, path, "must not be empty")
	case path == "/":
		return nil
	case !strings.HasPrefix(path, "/"):
		return field.Invalid(p, path, "must start with slash")
	case strings.Contains(path, " "):
		return field.Invalid(p, path, "must not contain white-space")
	case strings.Contains(path, "//"):
		return field.Invalid(p, path, "must not contain double slash")
	}
	if n := strings.Count(path, "*"); n > 1 || (n == 1 && !strings.HasSuffix(path, "/*")) {
		return field.Invalid(p, path, "wildcard can only do suffix matching")
	}
	return nil
}

// validateFlowSchemaStatus is upstream's ValidateFlowSchemaStatus.
func validateFlowSchemaStatus(status *flowcontrolv1.FlowSchemaStatus) field.ErrorList {
	types := make([]flowcontrolv1.FlowSchemaConditionType, len(status.Conditions))
	for i, c := range status.Conditions {
		types[i] = c.Type
	}
	return validateConditionTypes(types)
}

// validateConditionTypes is the check of the conditions of upstream's
// status validations: each has a type, none twice.
func validateConditionTypes[T ~string](types []T) field.ErrorList {
	var errs field.ErrorList
	seen := map[T]bool{}
	p := field.NewPath("status", "conditions")
	for i, t := range types {
		if seen[t] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), t))
		}
		seen[t] = true
		if t == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
	}
	return errs
}
