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

package dra

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	resourcev1 "k8s.io/api/resource/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateClaimSpec is upstream's validateDeviceClaim (of a new claim,
// whose CEL expressions are all compiled): requests, constraints and
// configurations, those two naming requests of the claim.
func validateClaimSpec(spec *resourcev1.ResourceClaimSpec, path *field.Path) field.ErrorList {
	devices, path := &spec.Devices, path.Child("devices")
	names := gatherRequestNames(devices)
	errs := validateSet(devices.Requests, resourcev1.DeviceRequestsMaxSize, validateRequest,
		func(r resourcev1.DeviceRequest) string { return r.Name }, path.Child("requests"), coverage{true, true})
	errs = append(errs, validateSlice(devices.Constraints, resourcev1.DeviceConstraintsMaxSize, func(c resourcev1.DeviceConstraint, path *field.Path) field.ErrorList {
		return validateConstraint(c, path, names)
	}, path.Child("constraints"), coverage{size: true})...)
	return append(errs, validateSlice(devices.Config, resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceClaimConfiguration, path *field.Path) field.ErrorList {
		errs := validateRequestRefs(c.Requests, path.Child("requests"), names)
		return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, path, false)...)
	}, path.Child("config"), coverage{size: true})...)
}

// requestNames are a claim's requests' names, each with its subrequests'
// (nil for a request of exactly one kind of device).
type requestNames map[string]sets.Set[string]

func gatherRequestNames(devices *resourcev1.DeviceClaim) requestNames {
	names := requestNames{}
	for _, r := range devices.Requests {
		if len(r.FirstAvailable) == 0 {
			names[r.Name] = nil
			continue
		}
		subs := sets.New[string]()
		for _, s := range r.FirstAvailable {
			subs.Insert(s.Name)
		}
		names[r.Name] = subs
	}
	return names
}

// has is true of a request's name, or of a request's and a subrequest's
// separated by a slash.
func (r requestNames) has(name string) bool {
	segments := strings.Split(name, "/")
	subs, found := r[segments[0]]
	switch {
	case len(segments) > 2 || !found:
		return false
	case len(segments) == 1:
		return true
	}
	return subs.Has(segments[1])
}

const notARequest = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"

func validateRequestRefs(refs []string, path *field.Path, names requestNames) field.ErrorList {
	return validateSet(refs, resourcev1.DeviceRequestsMaxSize, func(name string, path *field.Path) field.ErrorList {
		return validateRequestRef(name, path, names)
	}, func(name string) string { return name }, path, coverage{true, true})
}

// validateRequestRef: name is a request's, or a request's and a
// subrequest's separated by a slash.
func validateRequestRef(name string, path *field.Path, names requestNames) field.ErrorList {
	segments := strings.Split(name, "/")
	if len(segments) > 2 {
		return field.ErrorList{field.Invalid(path, name, notARequest)}
	}
	var errs field.ErrorList
	for _, s := range segments {
		errs = append(errs, validateLabel(s, path)...)
	}
	if !names.has(name) {
		errs = append(errs, field.Invalid(path, name, notARequest))
	}
	return errs
}

func validateRequest(r resourcev1.DeviceRequest, path *field.Path) field.ErrorList {
	errs := validateLabel(r.Name, path.Child("name"))
	switch {
	case r.Exactly == nil && len(r.FirstAvailable) == 0:
		errs = append(errs, field.Required(path, "exactly one of `exactly` or `firstAvailable` is required"))
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		errs = append(errs, field.Invalid(path, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		e, path := r.Exactly, path.Child("exactly")
		errs = append(errs, validateDeviceClass(e.DeviceClassName, path.Child("deviceClassName"))...)
		errs = append(errs, validateSelectors(e.Selectors, path.Child("selectors"), false)...)
		errs = append(errs, validateAllocationMode(e.AllocationMode, e.Count, path)...)
		errs = append(errs, validateTolerations(e.Tolerations, path.Child("tolerations"))...)
	default:
		errs = append(errs, validateSet(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize, func(s resourcev1.DeviceSubRequest, path *field.Path) field.ErrorList {
			errs := validateLabel(s.Name, path.Child("name"))
			errs = append(errs, validateDeviceClass(s.DeviceClassName, path.Child("deviceClassName")).MarkCoveredByDeclarative()...)
			errs = append(errs, validateSelectors(s.Selectors, path.Child("selectors"), false)...)
			errs = append(errs, validateAllocationMode(s.AllocationMode, s.Count, path)...)
			return append(errs, validateTolerations(s.Tolerations, path.Child("tolerations"))...)
		}, func(s resourcev1.DeviceSubRequest) string { return s.Name }, path.Child("firstAvailable"), coverage{true, true})...)
	}
	return errs
}

func validateDeviceClass(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return validateSubdomain(name, path)
}

// validateSelectors: each has a CEL expression, compiled unless stored.
func validateSelectors(selectors []resourcev1.DeviceSelector, path *field.Path, stored bool) field.ErrorList {
	return validateSlice(selectors, resourcev1.DeviceSelectorsMaxSize, func(s resourcev1.DeviceSelector, path *field.Path) field.ErrorList {
		switch {
		case s.CEL == nil:
			return field.ErrorList{field.Required(path.Child("cel"), "")}
		case stored:
			return nil
		}
		return validateCELExpression(s.CEL.Expression, path.Child("cel", "expression"))
	}, path, coverage{size: true})
}

func validateAllocationMode(mode resourcev1.DeviceAllocationMode, count int64, path *field.Path) field.ErrorList {
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(path.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode))}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(path.Child("count"), count, "must be greater than zero")}
		}
	default:
		return field.ErrorList{field.NotSupported(path.Child("allocationMode"), mode, []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}).MarkCoveredByDeclarative()}
	}
	return nil
}

func validateTolerations(tolerations []resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		errs = append(errs, validateToleration(t, path.Index(i))...)
	}
	return errs
}

func validateConstraint(c resourcev1.DeviceConstraint, path *field.Path, names requestNames) field.ErrorList {
	errs := validateRequestRefs(c.Requests, path.Child("requests"), names)
	switch {
	case c.MatchAttribute != nil:
		errs = append(errs, validateFullyQualifiedName(*c.MatchAttribute, path.Child("matchAttribute")).MarkCoveredByDeclarative()...)
	case c.DistinctAttribute != nil:
		errs = append(errs, validateFullyQualifiedName(*c.DistinctAttribute, path.Child("distinctAttribute")).MarkCoveredByDeclarative()...)
	default:
		errs = append(errs, field.Required(path, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	return errs
}

// validateTemplateMeta: a template's metadata has valid labels and
// annotations and nothing else, as upstream's ValidateTemplateObjectMeta.
func validateTemplateMeta(m *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateAnnotations(m.Annotations, path.Child("annotations"))
	errs = append(errs, metav1validation.ValidateLabels(m.Labels, path.Child("labels"))...)
	t, v := reflect.TypeOf(*m), reflect.ValueOf(*m)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		errs = append(errs, field.Forbidden(path.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set"))
	}
	return errs
}
