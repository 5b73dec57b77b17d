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

package configmap

import (
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validate checks a configmap's keys and size as upstream's
// ValidateConfigMap does (keys in order, where upstream's order is random).
func validate(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	dataPath, binaryPath := field.NewPath("data"), field.NewPath("binaryData")
	total := 0
	for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
		errs = append(errs, ValidateKey(key, dataPath.Key(key))...)
		if _, dup := cm.BinaryData[key]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(cm.Data[key])
	}
	for _, key := range slices.Sorted(maps.Keys(cm.BinaryData)) {
		errs = append(errs, ValidateKey(key, binaryPath.Key(key))...)
		total += len(cm.BinaryData[key])
	}
	if total > corev1.MaxSecretSize {
		// upstream's path "" stands for the whole object
		errs = append(errs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return errs
}

// validateUpdate checks a configmap's update as upstream's
// ValidateConfigMapUpdate does.
func validateUpdate(cm, old *corev1.ConfigMap) field.ErrorList {
	errs := ValidateImmutable(cm.Immutable, old.Immutable, !reflect.DeepEqual(cm.Data, old.Data), !reflect.DeepEqual(cm.BinaryData, old.BinaryData))
	return append(errs, validate(cm)...)
}

// ValidateKey checks a key of a configmap's or a secret's data.
func ValidateKey(key string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsConfigMapKey(key) {
		errs = append(errs, field.Invalid(path, key, msg))
	}
	return errs
}

// ValidateImmutable forbids, once a configmap or secret is immutable,
// unsetting immutable and changing its data or binaryData.
func ValidateImmutable(immutable, oldImmutable *bool, dataChanged, binaryChanged bool) field.ErrorList {
	if oldImmutable == nil || !*oldImmutable {
		return nil
	}
	const msg = "field is immutable when `immutable` is set"
	var errs field.ErrorList
	if immutable == nil || !*immutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), msg))
	}
	if dataChanged {
		errs = append(errs, field.Forbidden(field.NewPath("data"), msg))
	}
	if binaryChanged {
		errs = append(errs, field.Forbidden(field.NewPath("binaryData"), msg))
	}
	return errs
}
