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
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The small validators upstream names (k8s.io/kubernetes
// pkg/apis/resource/validation), with its messages.

// validateDriverName is a CSI driver's name's rule: at most 63
// characters, a DNS subdomain once lowercased.
func validateDriverName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > 63 {
		errs = append(errs, field.TooLong(path, "", 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validateLabel(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

func validateSubdomain(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// validatePoolName: required, at most 253 characters, DNS subdomains
// separated by slashes.
func validatePoolName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, validateSubdomain(part, path)...)
	}
	return errs
}

// validateSet checks a list's size (a longer one is only that error, as
// upstream's DOS guard), each item, and that keys are unique.
func validateSet[T any, K comparable](items []T, max int, item func(T, *field.Path) field.ErrorList, key func(T) K, path *field.Path) field.ErrorList {
	if max >= 0 && len(items) > max {
		return field.ErrorList{field.TooMany(path, len(items), max)}
	}
	var errs field.ErrorList
	seen := sets.New[K]()
	for i, it := range items {
		if item != nil {
			errs = append(errs, item(it, path.Index(i))...)
		}
	}
	if key != nil {
		for i, it := range items {
			if k := key(it); seen.Has(k) {
				errs = append(errs, field.Duplicate(path.Index(i), k))
			} else {
				seen.Insert(k)
			}
		}
	}
	return errs
}

func validateSelectors(selectors []resourcev1.DeviceSelector, path *field.Path) field.ErrorList {
	return validateSet[resourcev1.DeviceSelector, string](selectors, resourcev1.DeviceSelectorsMaxSize, func(s resourcev1.DeviceSelector, path *field.Path) field.ErrorList {
		if s.CEL == nil {
			return field.ErrorList{field.Required(path.Child("cel"), "")}
		}
		if s.CEL.Expression == "" {
			return field.ErrorList{field.Required(path.Child("cel", "expression"), "")}
		}
		return nil
	}, nil, path)
}

// validateClaimSpec is upstream's validateDeviceClaim without the CEL
// compilation and the constraints' and configs' references.
func validateClaimSpec(spec *resourcev1.ResourceClaimSpec, path *field.Path) field.ErrorList {
	devices := path.Child("devices")
	errs := validateSet(spec.Devices.Requests, resourcev1.DeviceRequestsMaxSize, validateRequest,
		func(r resourcev1.DeviceRequest) string { return r.Name }, devices.Child("requests"))
	errs = append(errs, validateSet[resourcev1.DeviceConstraint, string](spec.Devices.Constraints, resourcev1.DeviceConstraintsMaxSize, nil, nil, devices.Child("constraints"))...)
	errs = append(errs, validateSet[resourcev1.DeviceClaimConfiguration, string](spec.Devices.Config, resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceClaimConfiguration, path *field.Path) field.ErrorList {
		return validateOpaque(c.Opaque, path)
	}, nil, devices.Child("config"))...)
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
		e := r.Exactly
		errs = append(errs, validateDeviceRequest(path.Child("exactly"), e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations)...)
	default:
		errs = append(errs, validateSet(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize, func(s resourcev1.DeviceSubRequest, path *field.Path) field.ErrorList {
			errs := validateLabel(s.Name, path.Child("name"))
			return append(errs, validateDeviceRequest(path, s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, s.Tolerations)...)
		}, func(s resourcev1.DeviceSubRequest) string { return s.Name }, path.Child("firstAvailable"))...)
	}
	return errs
}

func validateDeviceRequest(path *field.Path, class string, selectors []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64, tolerations []resourcev1.DeviceToleration) field.ErrorList {
	var errs field.ErrorList
	if class == "" {
		errs = append(errs, field.Required(path.Child("deviceClassName"), ""))
	} else {
		errs = append(errs, validateSubdomain(class, path.Child("deviceClassName"))...)
	}
	errs = append(errs, validateSelectors(selectors, path.Child("selectors"))...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			errs = append(errs, field.Invalid(path.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			errs = append(errs, field.Invalid(path.Child("count"), count, "must be greater than zero"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("allocationMode"), mode, []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}))
	}
	for i, t := range tolerations {
		errs = append(errs, validateToleration(t, path.Child("tolerations").Index(i))...)
	}
	return errs
}

var (
	tolerationOperators = []resourcev1.DeviceTolerationOperator{resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists}
	taintEffects        = sets.New(resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone)
)

func validateToleration(t resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, path.Child("key"))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, validateLabelValue(t.Value, path.Child("value"))...)
	case "":
		errs = append(errs, field.Required(path.Child("operator"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, tolerationOperators))
	}
	switch {
	case t.Effect == "":
	case !taintEffects.Has(t.Effect):
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)))
	}
	return errs
}

func validateLabelValue(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// validateTaint: a label name as key, a label value, a known effect (only
// checked when it changes).
func validateTaint(t resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelName(t.Key, path.Child("key"))
	if t.Value != "" {
		errs = append(errs, validateLabelValue(t.Value, path.Child("value"))...)
	}
	if old == nil || old.Effect != t.Effect {
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(path.Child("effect"), ""))
		case !taintEffects.Has(t.Effect):
			errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)))
		}
	}
	return errs
}

// validateOpaque: the driver's name, and parameters given.
func validateOpaque(c *resourcev1.OpaqueDeviceConfiguration, path *field.Path) field.ErrorList {
	if c == nil {
		return field.ErrorList{field.Required(path.Child("opaque"), "")}
	}
	errs := validateDriverName(c.Driver, path.Child("opaque", "driver"))
	if len(c.Parameters.Raw) == 0 && c.Parameters.Object == nil {
		errs = append(errs, field.Required(path.Child("opaque", "parameters"), ""))
	}
	return errs
}

// validateClaimStatusUpdate is upstream's status invariants: consumers
// named and unique (at most 256), none without an allocation, none added
// to a claim being deleted, and an allocation immutable once made.
func validateClaimStatusUpdate(claim, old *resourcev1.ResourceClaim) field.ErrorList {
	path := field.NewPath("status")
	status, oldStatus := &claim.Status, &old.Status
	errs := validateSet(status.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize, func(r resourcev1.ResourceClaimConsumerReference, path *field.Path) field.ErrorList {
		var errs field.ErrorList
		for _, f := range []struct{ name, value string }{{"resource", r.Resource}, {"name", r.Name}, {"uid", string(r.UID)}} {
			if f.value == "" {
				errs = append(errs, field.Required(path.Child(f.name), ""))
			}
		}
		return errs
	}, func(r resourcev1.ResourceClaimConsumerReference) types.UID { return r.UID }, path.Child("reservedFor"))
	if len(status.ReservedFor) > 0 {
		if status.Allocation == nil {
			errs = append(errs, field.Forbidden(path.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		} else if claim.DeletionTimestamp != nil && !sets.New(oldStatus.ReservedFor...).IsSuperset(sets.New(status.ReservedFor...)) {
			errs = append(errs, field.Forbidden(path.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}
	if oldStatus.Allocation != nil && status.Allocation != nil {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(status.Allocation, oldStatus.Allocation, path.Child("allocation"))...)
	}
	return errs
}
