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

package ipaddress

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

var parentRefPath = field.NewPath("spec", "parentRef")

// validateParent is upstream's validation of an address's parent on a
// create, or an update (of old), where it is immutable: the handwritten
// errors, less those the declarative ones replace, then those.
func validateParent(ref, old *networkingv1.ParentReference, update bool) field.ErrorList {
	errs := validateParentRef(ref)
	if update {
		immutable := apimachineryvalidation.ValidateImmutableField(ref, old, parentRefPath)
		for _, e := range immutable {
			e.WithOrigin("immutable").MarkCoveredByDeclarative()
		}
		errs = append(errs, immutable...)
	}
	return registry.WithDeclarative(errs, declarative(ref, old, update))
}

// validateParentRef is upstream's validateIPAddressParentReference.
func validateParentRef(ref *networkingv1.ParentReference) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(parentRefPath, "").MarkCoveredByDeclarative()}
	}
	var errs field.ErrorList
	if ref.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Group) {
			errs = append(errs, field.Invalid(parentRefPath.Child("group"), ref.Group, msg))
		}
	}
	errs = append(errs, requiredSegment(ref.Resource, parentRefPath.Child("resource"))...)
	errs = append(errs, requiredSegment(ref.Name, parentRefPath.Child("name"))...)
	if ref.Namespace != "" {
		errs = append(errs, segment(ref.Namespace, parentRefPath.Child("namespace"))...)
	}
	return errs
}

// requiredSegment is a required path segment name; its absence is an
// error covered by declarative validation.
func requiredSegment(s string, p *field.Path) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(p, "").MarkCoveredByDeclarative()}
	}
	return segment(s, p)
}

func segment(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(s) {
		errs = append(errs, field.Invalid(p, s, msg))
	}
	return errs
}

// declarative is what the v1 type's declared rules say of the parent: it
// is required, and immutable once set; on a create its resource and name
// are required. An unchanged parent is not checked again.
func declarative(ref, old *networkingv1.ParentReference, update bool) field.ErrorList {
	if update && (ref == old || ref != nil && old != nil && *ref == *old) {
		return nil
	}
	var errs field.ErrorList
	if ref == nil {
		errs = append(errs, field.Required(parentRefPath, ""))
	}
	if update {
		errs = append(errs, field.Invalid(parentRefPath, nil, apimachineryvalidation.FieldImmutableErrorMsg).WithOrigin("immutable"))
	}
	if len(errs) != 0 {
		return errs
	}
	if ref.Resource == "" {
		errs = append(errs, field.Required(parentRefPath.Child("resource"), ""))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(parentRefPath.Child("name"), ""))
	}
	return errs
}
