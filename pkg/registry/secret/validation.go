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

package secret

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/configmap"
)

// validate checks a secret's keys, size and the keys its type requires,
// as upstream's ValidateSecret does (keys in order, where upstream's
// order is random).
func validate(sec *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	total := 0
	for _, key := range slices.Sorted(maps.Keys(sec.Data)) {
		errs = append(errs, configmap.ValidateKey(key, dataPath.Key(key))...)
		total += len(sec.Data[key])
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", corev1.MaxSecretSize))
	}
	return append(errs, validateType(sec, dataPath)...)
}

// validateType checks the annotations and the data keys sec's type requires.
func validateType(sec *corev1.Secret, dataPath *field.Path) field.ErrorList {
	required := func(key string) *field.Error { return field.Required(dataPath.Key(key), "") }
	switch sec.Type {
	case corev1.SecretTypeServiceAccountToken:
		// the uid annotation and the token are the token controller's to add
		if sec.Annotations[corev1.ServiceAccountNameKey] == "" {
			return field.ErrorList{field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey), "")}
		}
	case corev1.SecretTypeDockercfg:
		return validateJSONKey(sec.Data, corev1.DockerConfigKey, dataPath)
	case corev1.SecretTypeDockerConfigJson:
		return validateJSONKey(sec.Data, corev1.DockerConfigJsonKey, dataPath)
	case corev1.SecretTypeBasicAuth:
		// either may be empty, but one must be there
		_, hasUsername := sec.Data[corev1.BasicAuthUsernameKey]
		_, hasPassword := sec.Data[corev1.BasicAuthPasswordKey]
		if !hasUsername && !hasPassword {
			return field.ErrorList{required(corev1.BasicAuthUsernameKey), required(corev1.BasicAuthPasswordKey)}
		}
	case corev1.SecretTypeSSHAuth:
		if len(sec.Data[corev1.SSHAuthPrivateKey]) == 0 {
			return field.ErrorList{required(corev1.SSHAuthPrivateKey)}
		}
	case corev1.SecretTypeTLS:
		var errs field.ErrorList
		for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := sec.Data[key]; !ok {
				errs = append(errs, required(key))
			}
		}
		return errs
	}
	return nil
}

// validateJSONKey requires data[key], a JSON object.
func validateJSONKey(data map[string][]byte, key string, dataPath *field.Path) field.ErrorList {
	value, ok := data[key]
	if !ok {
		return field.ErrorList{field.Required(dataPath.Key(key), "")}
	}
	if err := json.Unmarshal(value, &map[string]any{}); err != nil {
		return field.ErrorList{field.Invalid(dataPath.Key(key), "<secret contents redacted>", err.Error())}
	}
	return nil
}

// validateUpdate checks a secret's update as upstream's
// ValidateSecretUpdate does.
func validateUpdate(sec, old *corev1.Secret) field.ErrorList {
	errs := apimachineryvalidation.ValidateImmutableField(sec.Type, old.Type, field.NewPath("type"))
	errs = append(errs, configmap.ValidateImmutable(sec.Immutable, old.Immutable, !reflect.DeepEqual(sec.Data, old.Data), false)...)
	return append(errs, validate(sec)...)
}
