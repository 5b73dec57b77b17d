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
	"regexp"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	validatingpolicy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

var (
	supportedValidationReasons = []string{string(metav1.StatusReasonForbidden), string(metav1.StatusReasonInvalid), string(metav1.StatusReasonRequestEntityTooLarge)}
	supportedPatchTypes        = []string{string(admissionregistrationv1.PatchTypeApplyConfiguration), string(admissionregistrationv1.PatchTypeJSONPatch)}
	// supportedMutatingOperations: a mutating policy cannot act on DELETE.
	supportedMutatingOperations = []string{string(admissionregistrationv1.OperationAll), string(admissionregistrationv1.Connect),
		string(admissionregistrationv1.Create), string(admissionregistrationv1.Update)}
)

const (
	maxAuditAnnotations = 20
	// maxAuditAnnotationValueExpressionLength is 5kb, less than an audit
	// annotation value's 10kb: the values an expression builds are longer than it.
	maxAuditAnnotationValueExpressionLength = 5 * 1024
)

// policyUpdateOptions are upstream's Validate*AdmissionPolicyUpdate options:
// match conditions are not compiled again when neither they nor the
// paramKind changed, and stored expressions compile as stored.
func policyUpdateOptions(spec, old policySpec, stored storedExpressions) options {
	return options{
		ignoreMatchConditions: apiequality.Semantic.DeepEqual(spec.paramKind, old.paramKind) &&
			apiequality.Semantic.DeepEqual(spec.matchConditions, old.matchConditions),
		stored: stored,
	}
}

// policySpec is what validating and mutating policies share.
type policySpec struct {
	paramKind        *admissionregistrationv1.ParamKind
	matchConstraints *admissionregistrationv1.MatchResources
	matchConditions  []admissionregistrationv1.MatchCondition
	failurePolicy    *admissionregistrationv1.FailurePolicyType
}

func validatingPolicySpec(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) policySpec {
	return policySpec{s.ParamKind, s.MatchConstraints, s.MatchConditions, s.FailurePolicy}
}

func mutatingPolicySpec(s *admissionregistrationv1.MutatingAdmissionPolicySpec) policySpec {
	return policySpec{s.ParamKind, s.MatchConstraints, s.MatchConditions, s.FailurePolicy}
}

// validateCommon checks the failurePolicy, paramKind and matchConstraints
// of a policy spec; it returns opts with params allowed if there is a paramKind.
func (s policySpec) validateCommon(opts options, p *field.Path) (field.ErrorList, options) {
	var errs field.ErrorList
	if s.failurePolicy == nil {
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	} else if !slices.Contains(supportedFailurePolicies, string(*s.failurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *s.failurePolicy, supportedFailurePolicies))
	}
	if s.paramKind != nil {
		opts.allowParamsInMatchConditions = true
		errs = append(errs, validateParamKind(*s.paramKind, p.Child("paramKind"))...)
	}
	if s.matchConstraints == nil {
		errs = append(errs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(s.matchConstraints, p.Child("matchConstraints"))...)
		// At least one resourceRule, to give the expressions a type.
		if len(s.matchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	return errs, opts
}

// validateValidatingPolicySpec is upstream's validateValidatingAdmissionPolicySpec.
func validateValidatingPolicySpec(name string, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, opts options) field.ErrorList {
	p := field.NewPath("spec")
	var compiler plugincel.Compiler // stateful when composited: made once per policy, when needed
	getCompiler := func() plugincel.Compiler {
		if compiler == nil {
			compiler = newCompiler(len(spec.Variables) > 0)
		}
		return compiler
	}
	errs, opts := validatingPolicySpec(spec).validateCommon(opts, p)
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(spec.MatchConditions, opts, p.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		errs = append(errs, validateVariable(getCompiler(), &spec.Variables[i], spec.ParamKind, opts, p.Child("variables").Index(i))...)
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		return append(errs,
			field.Required(p.Child("validations"), "validations or auditAnnotations must contain at least one item"),
			field.Required(p.Child("auditAnnotations"), "validations or auditAnnotations must contain at least one item"))
	}
	for i := range spec.Validations {
		errs = append(errs, validateValidation(getCompiler(), &spec.Validations[i], spec.ParamKind, opts, p.Child("validations").Index(i))...)
	}
	if len(spec.AuditAnnotations) > maxAuditAnnotations {
		errs = append(errs, field.Invalid(p.Child("auditAnnotations"), registry.Internal(spec.AuditAnnotations), fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := sets.New[string]()
	for i, a := range spec.AuditAnnotations {
		ap := p.Child("auditAnnotations").Index(i)
		errs = append(errs, validateAuditAnnotation(getCompiler(), name, &a, spec.ParamKind, opts, ap)...)
		if keys.Has(a.Key) {
			errs = append(errs, field.Duplicate(ap.Child("key"), a.Key))
		}
		keys.Insert(a.Key)
	}
	return errs
}

// validatingPolicyStored are the expressions of a stored validating policy.
func validatingPolicyStored(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec) storedExpressions {
	stored := storedExpressions{
		matchConditions: matchConditionExpressions(spec.MatchConditions),
		validations:     sets.New[string](), messages: sets.New[string](), auditAnnotations: sets.New[string](),
	}
	for _, v := range spec.Validations {
		stored.validations.Insert(v.Expression)
		if v.MessageExpression != "" {
			stored.messages.Insert(v.MessageExpression)
		}
	}
	for _, a := range spec.AuditAnnotations {
		stored.auditAnnotations.Insert(a.ValueExpression)
	}
	return stored
}

// validateParamKind is upstream's: apiVersion as an APIService's group and
// version, kind a DNS label in any case.
func validateParamKind(gvk admissionregistrationv1.ParamKind, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if gvk.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if group, version, err := parseGroupVersion(gvk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), gvk.APIVersion, err.Error()))
	} else {
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("apiVersion"), group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), gvk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), version, strings.Join(msgs, ",")))
		}
	}
	if gvk.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(gvk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), gvk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// parseGroupVersion is upstream's: "group/version", or "version" for the core group.
func parseGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	default:
		return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
	}
}

// validateVariable is upstream's: a CEL identifier and an expression
// compiled (and stored in the composited compiler, for later expressions).
func validateVariable(compiler plugincel.Compiler, v *admissionregistrationv1.Variable, paramKind *admissionregistrationv1.ParamKind, opts options, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Name) == "" {
		errs = append(errs, field.Required(p.Child("name"), "name is not specified"))
	} else if !isCELIdentifier(v.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(v.Expression) == "" {
		return append(errs, field.Required(p.Child("expression"), "expression is not specified"))
	}
	composited, ok := compiler.(*plugincel.CompositedCompiler)
	if !ok {
		return append(errs, field.InternalError(p, fmt.Errorf("variable composition is not allowed")))
	}
	variable := &validatingpolicy.Variable{Name: v.Name, Expression: v.Expression}
	// As upstream, a variable counts as stored if a validation had its expression.
	result := composited.CompileAndStoreVariable(variable, plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true},
		envType(opts.stored.validations, v.Expression))
	if result.Error != nil {
		errs = append(errs, celError(p.Child("expression"), variable, result.Error))
	}
	return errs
}

var newlines = regexp.MustCompile(`[\n\r]+`) // the line breaks of CEL's grammar

// validateValidation is upstream's: a boolean expression, an optional
// one-line message or string messageExpression, a known reason.
func validateValidation(compiler plugincel.Compiler, v *admissionregistrationv1.Validation, paramKind *admissionregistrationv1.ParamKind, opts options, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(p.Child("expression"), "expression is not specified"))
	} else {
		errs = append(errs, compile(compiler, &validatingpolicy.ValidationCondition{Expression: v.Expression},
			plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true},
			envType(opts.stored.validations, v.Expression), p.Child("expression"))...)
	}
	if trimmed := strings.TrimSpace(v.MessageExpression); v.MessageExpression != "" && trimmed == "" {
		errs = append(errs, field.Invalid(p.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if trimmed != "" {
		// The untrimmed expression, so that the compiler reports the right column.
		errs = append(errs, compile(compiler, &validatingpolicy.MessageExpressionCondition{MessageExpression: v.MessageExpression},
			plugincel.OptionalVariableDeclarations{HasParams: opts.allowParamsInMatchConditions, HasAuthorizer: false},
			envType(opts.stored.messages, v.MessageExpression), p.Child("messageExpression"))...)
	}
	if trimmed := strings.TrimSpace(v.Message); v.Message != "" && trimmed == "" {
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must be non-empty if specified"))
	} else if newlines.MatchString(trimmed) {
		errs = append(errs, field.Invalid(p.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !slices.Contains(supportedValidationReasons, string(*v.Reason)) {
		errs = append(errs, field.NotSupported(p.Child("reason"), *v.Reason, supportedValidationReasons))
	}
	return errs
}

// validateAuditAnnotation is upstream's: "<policy name>/<key>" a qualified
// name, and a string (or null) valueExpression of at most 5kb.
func validateAuditAnnotation(compiler plugincel.Compiler, policyName string, a *admissionregistrationv1.AuditAnnotation, paramKind *admissionregistrationv1.ParamKind, opts options, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policyName != "" {
		for _, msg := range utilvalidation.IsQualifiedName(policyName + "/" + a.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), policyName+"/"+a.Key, msg).WithOrigin("format=qualified-name"))
		}
	} else {
		errs = append(errs, field.Invalid(p.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	trimmed := strings.TrimSpace(a.ValueExpression)
	switch {
	case trimmed == "":
		return append(errs, field.Required(p.Child("valueExpression"), "valueExpression is not specified"))
	case len(trimmed) > maxAuditAnnotationValueExpressionLength:
		return append(errs, field.Required(p.Child("valueExpression"), fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpressionLength)))
	}
	result := compiler.CompileCELExpression(&validatingpolicy.AuditAnnotationCondition{ValueExpression: trimmed},
		plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true}, envType(opts.stored.auditAnnotations, a.ValueExpression))
	if result.Error != nil {
		switch result.Error.Type {
		case cel.ErrorTypeRequired:
			errs = append(errs, field.Required(p.Child("valueExpression"), result.Error.Detail))
		case cel.ErrorTypeInvalid:
			errs = append(errs, field.Invalid(p.Child("valueExpression"), a.ValueExpression, result.Error.Detail))
		default:
			errs = append(errs, field.InternalError(p.Child("valueExpression"), result.Error))
		}
	}
	return errs
}

// validateStatus is upstream's validateValidatingAdmissionPolicyStatus.
func validateStatus(status *admissionregistrationv1.ValidatingAdmissionPolicyStatus) field.ErrorList {
	p := field.NewPath("status")
	var errs field.ErrorList
	if tc := status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			wp := p.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				errs = append(errs, field.Required(wp.Child("warning"), ""))
			}
			errs = append(errs, validateFieldRef(w.FieldRef, wp.Child("fieldRef"))...)
		}
	}
	return append(errs, metav1validation.ValidateConditions(status.Conditions, p.Child("conditions"))...)
}

// validateMutatingPolicySpec is upstream's validateMutatingAdmissionPolicySpec.
func validateMutatingPolicySpec(spec *admissionregistrationv1.MutatingAdmissionPolicySpec, opts options) field.ErrorList {
	p := field.NewPath("spec")
	compiler := newCompiler(true)
	errs, opts := mutatingPolicySpec(spec).validateCommon(opts, p)
	if spec.MatchConstraints != nil {
		errs = append(errs, validateMutatingOperations(spec.MatchConstraints, p.Child("matchConstraints"))...)
	}
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(spec.MatchConditions, opts, p.Child("matchConditions"))...)
	}
	for i := range spec.Variables {
		errs = append(errs, validateVariable(compiler, &spec.Variables[i], spec.ParamKind, opts, p.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(p.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, validateMutation(compiler, &spec.Mutations[i], spec.ParamKind, opts, p.Child("mutations").Index(i))...)
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(p.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(supportedReinvocationPolicies, string(spec.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), spec.ReinvocationPolicy, supportedReinvocationPolicies))
	}
	return errs
}

// validateMutatingOperations: only CREATE, UPDATE and CONNECT can be
// mutated. As upstream, the error's path has no rule index.
func validateMutatingOperations(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, rule := range m.ResourceRules {
		for _, op := range rule.Operations {
			if !slices.Contains(supportedMutatingOperations, string(op)) {
				errs = append(errs, field.NotSupported(p.Child("resourceRules", "operations"), op, supportedMutatingOperations))
			}
		}
	}
	return errs
}

// mutatingPolicyStored are the expressions of a stored mutating policy. As
// upstream, JSON patch expressions are looked up among the apply
// configurations' (upstream's jsonPatchExpressions set is never read).
func mutatingPolicyStored(spec *admissionregistrationv1.MutatingAdmissionPolicySpec) storedExpressions {
	stored := storedExpressions{matchConditions: matchConditionExpressions(spec.MatchConditions), applyConfigurations: sets.New[string]()}
	for _, m := range spec.Mutations {
		if m.ApplyConfiguration != nil {
			stored.applyConfigurations.Insert(m.ApplyConfiguration.Expression)
		}
	}
	return stored
}

// validateMutation is upstream's: the patch of patchType, and only it, with its expression compiled.
func validateMutation(compiler plugincel.Compiler, m *admissionregistrationv1.Mutation, paramKind *admissionregistrationv1.ParamKind, opts options, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	vars := plugincel.OptionalVariableDeclarations{HasParams: paramKind != nil, HasAuthorizer: true, HasPatchTypes: true}
	patchExpression := func(expression string, accessor func(string) plugincel.ExpressionAccessor, pp *field.Path) field.ErrorList {
		trimmed := strings.TrimSpace(expression)
		if trimmed == "" {
			return field.ErrorList{field.Required(pp.Child("expression"), "")}
		}
		return compile(compiler, accessor(trimmed), vars, envType(opts.stored.applyConfigurations, expression), pp.Child("expression"))
	}
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(p.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(p.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			errs = append(errs, patchExpression(m.JSONPatch.Expression, func(e string) plugincel.ExpressionAccessor {
				return &patch.JSONPatchCondition{Expression: e}
			}, p.Child("jsonPatch"))...)
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(p.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(p.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			errs = append(errs, patchExpression(m.ApplyConfiguration.Expression, func(e string) plugincel.ExpressionAccessor {
				return &patch.ApplyConfigurationCondition{Expression: e}
			}, p.Child("applyConfiguration"))...)
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(p.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("patchType"), m.PatchType, supportedPatchTypes))
	}
	return errs
}
