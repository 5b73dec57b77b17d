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

package ingressclass

import (
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

var (
	specPath       = field.NewPath("spec")
	parametersPath = specPath.Child("parameters")
)

// maxControllerLength is upstream's maxLenIngressClassController.
const maxControllerLength = 250

// validateClass is upstream's validation of a class's spec on a create (old
// nil) or an update, where the controller is immutable, with what 1.37's
// declarative validation (beta, on by default) makes of it: a parameters
// kind or name that a create leaves or an update makes empty is reported
// after all other errors.
func validateClass(spec, old *networkingv1.IngressClassSpec) field.ErrorList {
	var errs field.ErrorList
	if old != nil {
		errs = apimachineryvalidation.ValidateImmutableField(spec.Controller, old.Controller, specPath.Child("controller"))
	}
	return registry.WithDeclarative(append(errs, validateSpec(spec)...), missingParameters(spec, old))
}

// missingParameters are the declarative errors of an empty parameters
// kind or name, unless an update leaves it as it was.
func missingParameters(spec, old *networkingv1.IngressClassSpec) field.ErrorList {
	params := spec.Parameters
	if params == nil {
		return nil
	}
	var oldParams *networkingv1.IngressClassParametersReference
	if old != nil {
		if apiequality.Semantic.DeepEqual(params, old.Parameters) {
			return nil
		}
		oldParams = old.Parameters
	}
	var errs field.ErrorList
	if params.Kind == "" && (oldParams == nil || oldParams.Kind != "") {
		errs = append(errs, field.Required(parametersPath.Child("kind"), ""))
	}
	if params.Name == "" && (oldParams == nil || oldParams.Name != "") {
		errs = append(errs, field.Required(parametersPath.Child("name"), ""))
	}
	return errs
}

// validateSpec is upstream's validateIngressClassSpec: a domain-prefixed
// controller and a well-formed parameters reference.
func validateSpec(spec *networkingv1.IngressClassSpec) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Controller) > maxControllerLength {
		errs = append(errs, field.TooLong(specPath.Child("controller"), "", maxControllerLength))
	}
	errs = append(errs, validation.IsDomainPrefixedPath(specPath.Child("controller"), spec.Controller)...)
	if spec.Parameters != nil {
		errs = append(errs, validateParameters(spec.Parameters)...)
	}
	return errs
}

// validateParameters is upstream's validateIngressClassParametersReference.
func validateParameters(params *networkingv1.IngressClassParametersReference) field.ErrorList {
	p := parametersPath
	var errs field.ErrorList
	if params.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*params.APIGroup) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), *params.APIGroup, msg))
		}
	}
	for _, f := range []struct{ name, value string }{{"kind", params.Kind}, {"name", params.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), "").MarkCoveredByDeclarative())
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	if params.Scope == nil {
		return append(errs, field.Required(p.Child("scope"), ""))
	}
	switch *params.Scope {
	case networkingv1.IngressClassParametersReferenceScopeNamespace:
		if params.Namespace == nil {
			errs = append(errs, field.Required(p.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		} else {
			for _, msg := range apimachineryvalidation.ValidateNamespaceName(*params.Namespace, false) {
				errs = append(errs, field.Invalid(p.Child("namespace"), *params.Namespace, msg))
			}
		}
	case networkingv1.IngressClassParametersReferenceScopeCluster:
		if params.Namespace != nil {
			errs = append(errs, field.Forbidden(p.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("scope"), *params.Scope, []string{
			networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
	}
	return errs
}
