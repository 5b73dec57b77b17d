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
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
)

// The small validators upstream names (k8s.io/kubernetes
// pkg/apis/resource/validation), with its messages, origins and the marks
// of what declarative validation covers.

// validateLabel is a DNS label: names of devices, requests and counters.
func validateLabel(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg).WithOrigin("format=k8s-short-name"))
	}
	return errs
}

// validateSubdomain is a DNS subdomain: device class and node names.
func validateSubdomain(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		errs = append(errs, field.Invalid(path, value, msg).WithOrigin("format=k8s-long-name"))
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
		errs = append(errs, field.TooLong(path, "", resourcev1.PoolNameMaxLength).WithOrigin("format=k8s-resource-pool-name"))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, validateSubdomain(part, path).WithOrigin("format=k8s-resource-pool-name")...)
	}
	return errs
}

func validateUID(uid string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if err := uuid.Validate(uid); err != nil {
		errs = append(errs, field.Invalid(path, uid, fmt.Sprintf("error validating uid: %v", err)))
	} else if len(uid) != 36 || uid != strings.ToLower(uid) {
		errs = append(errs, field.Invalid(path, uid, "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters"))
	}
	return errs.WithOrigin("format=k8s-uuid")
}

func validateLabelValue(value string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// coverage says which of a list's checks declarative validation covers.
type coverage struct{ size, uniqueness bool }

// validateSet checks a list's size (a longer one is only that error, as
// upstream's DOS guard), each item, and, with key, that keys are unique.
func validateSet[T any, K comparable](items []T, maxSize int, item func(T, *field.Path) field.ErrorList, key func(T) K, path *field.Path, c coverage) field.ErrorList {
	if maxSize >= 0 && len(items) > maxSize {
		err := field.TooMany(path, len(items), maxSize).WithOrigin("maxItems")
		if c.size {
			err = err.MarkCoveredByDeclarative()
		}
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for i, it := range items {
		errs = append(errs, item(it, path.Index(i))...)
	}
	if key == nil {
		return errs
	}
	seen := sets.New[K]()
	for i, it := range items {
		if k := key(it); seen.Has(k) {
			err := field.Duplicate(path.Index(i), k)
			if c.uniqueness {
				err = err.MarkCoveredByDeclarative()
			}
			errs = append(errs, err)
		} else {
			seen.Insert(k)
		}
	}
	return errs
}

// validateSlice is validateSet without the keys.
func validateSlice[T any](items []T, maxSize int, item func(T, *field.Path) field.ErrorList, path *field.Path, c coverage) field.ErrorList {
	return validateSet[T, int](items, maxSize, item, nil, path, c)
}

// validateMap checks a map's size, then each key (errors on the map's
// path, covered if keysCovered) and item (on the key's, truncated).
func validateMap[K ~string, T any](m map[K]T, maxSize, truncateKeyLen int, key func(K, *field.Path) field.ErrorList, item func(T, *field.Path) field.ErrorList, path *field.Path, keysCovered bool) field.ErrorList {
	if maxSize >= 0 && len(m) > maxSize {
		return field.ErrorList{field.TooMany(path, len(m), maxSize)}
	}
	var errs field.ErrorList
	for k, v := range m {
		keyErrs := key(k, path)
		if keysCovered {
			keyErrs = keyErrs.MarkCoveredByDeclarative()
		}
		errs = append(errs, keyErrs...)
		if item != nil {
			errs = append(errs, item(v, path.Key(truncateIfTooLong(string(k), truncateKeyLen)))...)
		}
	}
	return errs
}

func truncateIfTooLong(s string, maxLen int) string {
	maxLen = max(maxLen, 16)
	if len(s) <= maxLen {
		return s
	}
	remaining := maxLen - len("...")
	return s[:(remaining+1)/2] + "..." + s[len(s)-remaining/2:]
}

// validateQualifiedName: a C identifier, optionally after a driver-like
// domain and a slash.
func validateQualifiedName[T ~string](name T, path *field.Path) field.ErrorList {
	parts := strings.Split(string(name), "/")
	switch len(parts) {
	case 1:
		return validateCIdentifier(parts[0], path)
	case 2:
		var errs field.ErrorList
		if parts[0] == "" {
			errs = append(errs, field.Invalid(path, "", "the domain must not be empty"))
		} else {
			errs = append(errs, volume.CSIDriverName(parts[0], path)...)
		}
		if parts[1] == "" {
			errs = append(errs, field.Invalid(path, "", "the name must not be empty"))
		} else {
			errs = append(errs, validateCIdentifier(parts[1], path)...)
		}
		return errs
	}
	return nil
}

// validateFullyQualifiedName is a qualified name with a domain.
func validateFullyQualifiedName(name resourcev1.FullyQualifiedName, path *field.Path) field.ErrorList {
	errs := validateQualifiedName(name, path)
	if !strings.Contains(string(name), "/") {
		errs = append(errs, field.Invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
	}
	return errs.WithOrigin("format=k8s-resource-fully-qualified-name")
}

func validateCIdentifier(id string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		errs = append(errs, field.TooLong(path, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(path, id, msg))
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
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, path.Child("key")).MarkCoveredByDeclarative()...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		errs = append(errs, validateLabelValue(t.Value, path.Child("value"))...)
	case "":
		errs = append(errs, field.Required(path.Child("operator"), "").MarkCoveredByDeclarative())
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, tolerationOperators).MarkCoveredByDeclarative())
	}
	if t.Effect != "" && !taintEffects.Has(t.Effect) {
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)).MarkCoveredByDeclarative())
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
			errs = append(errs, field.Required(path.Child("effect"), "").MarkCoveredByDeclarative())
		case !taintEffects.Has(t.Effect):
			errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, sets.List(taintEffects)).MarkCoveredByDeclarative())
		}
	}
	return errs
}

// validateDeviceConfiguration: an opaque configuration, its driver's name
// and a JSON object as parameters (of any size if stored).
func validateDeviceConfiguration(c resourcev1.DeviceConfiguration, path *field.Path, stored bool) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(path.Child("opaque"), "")}
	}
	path = path.Child("opaque")
	errs := volume.CoveredCSIDriverName(c.Opaque.Driver, path.Child("driver"))
	return append(errs, validateRawExtension(c.Opaque.Parameters, path.Child("parameters"), stored, resourcev1.OpaqueParametersMaxLength)...)
}

func validateRawExtension(raw runtime.RawExtension, path *field.Path, stored bool, maxLength int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(path, "")}
	case !stored && len(raw.Raw) > maxLength:
		return field.ErrorList{field.TooLong(path, "", maxLength)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(path, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(path, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

// validateBindingConditions: at most a few of each, unique, label names,
// none in both lists, and neither list without the other.
func validateBindingConditions(conditions, failureConditions []string, path *field.Path) field.ErrorList {
	labelName := func(name string, path *field.Path) field.ErrorList {
		return metav1validation.ValidateLabelName(name, path)
	}
	errs := validateSlice(conditions, resourcev1.BindingConditionsMaxSize, labelName, path.Child("bindingConditions"), coverage{size: true})
	errs = append(errs, validateSlice(failureConditions, resourcev1.BindingFailureConditionsMaxSize, labelName, path.Child("bindingFailureConditions"), coverage{size: true})...)
	seen := sets.New[string]()
	for i, c := range conditions {
		if seen.Has(c) {
			errs = append(errs, field.Duplicate(path.Child("bindingConditions").Index(i), c))
		}
		seen.Insert(c)
	}
	seenFailures := sets.New[string]()
	for i, c := range failureConditions {
		if seenFailures.Has(c) {
			errs = append(errs, field.Duplicate(path.Child("bindingFailureConditions").Index(i), c))
		}
		seenFailures.Insert(c)
		if slices.Contains(conditions, c) {
			errs = append(errs, field.Invalid(path.Child("bindingFailureConditions").Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conditions) == 0 && len(failureConditions) > 0 {
		errs = append(errs, field.Invalid(path.Child("bindingConditions"), conditions, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failureConditions) == 0 && len(conditions) > 0 {
		errs = append(errs, field.Invalid(path.Child("bindingFailureConditions"), failureConditions, "bindingFailureConditions are required to use bindingConditions"))
	}
	return errs
}
