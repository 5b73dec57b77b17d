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

package storageclass

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// validateClass is upstream's validation of a class, less the metadata,
// on a create (old nil) or an update, where provisioner, parameters,
// reclaimPolicy and volumeBindingMode are immutable: the handwritten
// errors, less those the declarative ones replace, then those.
func validateClass(sc, old *storagev1.StorageClass) field.ErrorList {
	return registry.WithDeclarative(validateFields(sc), declarative(sc, old))
}

// Upstream's bounds on parameters.
const (
	maxParameters     = 512
	maxParametersSize = 256 * (1 << 10)
)

var (
	supportedReclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}
	supportedBindingModes    = []string{string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}
)

// validateFields is upstream's ValidateStorageClass, less the metadata.
func validateFields(sc *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(p, sc.Provisioner).MarkCoveredByDeclarative())
	} else {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(sc.Provisioner)) {
			errs = append(errs, field.Invalid(p, strings.ToLower(sc.Provisioner), msg))
		}
	}
	errs = append(errs, ValidateParameters(sc.Parameters, true)...)
	if r := sc.ReclaimPolicy; r != nil && *r != "" && !slices.Contains(supportedReclaimPolicies, string(*r)) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), *r, supportedReclaimPolicies))
	}
	switch m := sc.VolumeBindingMode; {
	case m == nil:
		errs = append(errs, field.Required(field.NewPath("volumeBindingMode"), ""))
	case !slices.Contains(supportedBindingModes, string(*m)):
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), *m, supportedBindingModes))
	}
	return append(errs, validateAllowedTopologies(sc.AllowedTopologies)...)
}

// ValidateParameters is upstream's validateParameters of a storage class's
// or a volume attributes class's parameters (which may not be empty
// unless allowEmpty): not too many, no empty key, not too large.
func ValidateParameters(params map[string]string, allowEmpty bool) field.ErrorList {
	p := field.NewPath("parameters")
	if len(params) > maxParameters {
		return field.ErrorList{field.TooLong(p, "", maxParameters)}
	}
	var errs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParametersSize {
		errs = append(errs, field.TooLong(p, "", maxParametersSize))
	}
	if !allowEmpty && len(params) == 0 {
		errs = append(errs, field.Required(p, "must contain at least one key/value pair"))
	}
	return errs
}

// validateAllowedTopologies is upstream's validateAllowedTopologies: each
// term's expressions have a label key, at least one value, no duplicate
// value or key, and no two terms are the same. As upstream compares each
// term with as many empty ones as there are terms too, a term without
// expressions is always a duplicate.
func validateAllowedTopologies(terms []corev1.TopologySelectorTerm) field.ErrorList {
	var errs field.ErrorList
	var seen []map[string]sets.Set[string]
	for i, term := range terms {
		tp := field.NewPath("allowedTopologies").Index(i)
		exprs := map[string]sets.Set[string]{}
		for j, req := range term.MatchLabelExpressions {
			ep := tp.Child("matchLabelExpressions").Index(j)
			values := sets.New[string]()
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(ep.Child("values"), ""))
			}
			for k, v := range req.Values {
				if values.Has(v) {
					errs = append(errs, field.Duplicate(ep.Child("values").Index(k), v))
				}
				values.Insert(v)
			}
			errs = append(errs, metav1validation.ValidateLabelName(req.Key, ep.Child("key"))...)
			if _, ok := exprs[req.Key]; ok {
				errs = append(errs, field.Duplicate(ep.Child("key"), req.Key))
			}
			exprs[req.Key] = values
		}
		if len(exprs) == 0 {
			errs = append(errs, field.Duplicate(tp.Child("matchLabelExpressions"), ""))
		}
		for _, other := range seen {
			if apiequality.Semantic.DeepEqual(exprs, other) {
				errs = append(errs, field.Duplicate(tp.Child("matchLabelExpressions"), ""))
			}
		}
		seen = append(seen, exprs)
	}
	return errs
}

// declarative is what 1.37's declarative validation (beta, on by
// default) reports of a create (old nil) or an update, after all other
// errors: a missing provisioner where a create or update sets it so, and
// a change to provisioner, parameters, reclaimPolicy or volumeBindingMode
// (an error with no value, in place of upstream's handwritten one).
func declarative(sc, old *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	if sc.Provisioner == "" && (old == nil || old.Provisioner != "") {
		errs = append(errs, field.Required(field.NewPath("provisioner"), ""))
	}
	if old == nil {
		return errs
	}
	for _, f := range []struct {
		name     string
		now, was any
	}{
		{"provisioner", sc.Provisioner, old.Provisioner},
		{"parameters", sc.Parameters, old.Parameters},
		{"reclaimPolicy", sc.ReclaimPolicy, old.ReclaimPolicy},
		{"volumeBindingMode", sc.VolumeBindingMode, old.VolumeBindingMode},
	} {
		if !apiequality.Semantic.DeepEqual(f.now, f.was) {
			errs = append(errs, field.Invalid(field.NewPath(f.name), nil, apimachineryvalidation.FieldImmutableErrorMsg))
		}
	}
	return errs
}
