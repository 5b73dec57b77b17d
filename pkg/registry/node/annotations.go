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

package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	schedulinghelper "k8s.io/component-helpers/scheduling/corev1"
)

// validateAnnotations is upstream's ValidateNodeSpecificAnnotations: the
// taints and the pods to avoid that the scheduler's alpha annotations
// hold, as JSON.
func validateAnnotations(annotations map[string]string) field.ErrorList {
	p := field.NewPath("metadata", "annotations")
	var errs field.ErrorList
	if value := annotations[corev1.TaintsAnnotationKey]; value != "" {
		var taints []corev1.Taint
		if err := json.Unmarshal([]byte(value), &taints); err != nil {
			errs = append(errs, field.Invalid(p, corev1.TaintsAnnotationKey, internalTaintError(err)))
		} else {
			errs = append(errs, validateTaints(taints, p.Child(corev1.TaintsAnnotationKey))...)
		}
	}
	if annotations[corev1.PreferAvoidPodsAnnotationKey] != "" {
		errs = append(errs, validateAvoidPods(annotations, p)...)
	}
	return errs
}

// internalTaintError is err as upstream words it: it decodes taints into
// its internal type, whose fields have their Go names in JSON.
func internalTaintError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err.Error()
	}
	typ := strings.ReplaceAll(typeErr.Type.String(), "v1.Taint", "core.Taint")
	if typeErr.Field == "" {
		return fmt.Sprintf("json: cannot unmarshal %s into Go value of type %s", typeErr.Value, typ)
	}
	goName := map[string]string{"key": "Key", "value": "Value", "effect": "Effect", "timeAdded": "TimeAdded"}[typeErr.Field]
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field Taint.%s of type %s", typeErr.Value, goName, typ)
}

// validateAvoidPods is upstream's ValidateAvoidPodsInNodeAnnotations:
// each entry's pod signature names a controller.
func validateAvoidPods(annotations map[string]string, p *field.Path) field.ErrorList {
	avoids, err := schedulinghelper.GetAvoidPodsFromNodeAnnotations(annotations)
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child("AvoidPods"), corev1.PreferAvoidPodsAnnotationKey, err.Error())}
	}
	var errs field.ErrorList
	for i, entry := range avoids.PreferAvoidPods {
		ip := p.Child(corev1.PreferAvoidPodsAnnotationKey).Index(i).Child("PodSignature")
		switch ref := entry.PodSignature.PodController; {
		case ref == nil:
			errs = append(errs, field.Required(ip, ""))
		case ref.Controller == nil || !*ref.Controller: // upstream dereferences a missing one, and panics
			errs = append(errs, field.Invalid(ip.Child("PodController", "Controller"), false, "must point to a controller"))
		}
	}
	return errs
}

var declaredFeatureName = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*(\/[a-zA-Z][a-zA-Z0-9]*)*$`)

// validateDeclaredFeatures is upstream's validateNodeDeclaredFeatures:
// feature names, each once, sorted.
func validateDeclaredFeatures(features []string) field.ErrorList {
	p := field.NewPath("status", "declaredFeatures")
	var errs field.ErrorList
	for i, feature := range features {
		switch {
		case len(feature) > validation.DNS1123SubdomainMaxLength:
			errs = append(errs, field.Invalid(p.Index(i), feature, fmt.Sprintf("invalid feature name %q: must be no more than %d characters", feature, validation.DNS1123SubdomainMaxLength)))
		case !declaredFeatureName.MatchString(feature):
			errs = append(errs, field.Invalid(p.Index(i), feature, fmt.Sprintf("invalid feature name %q: must start with an UpperCamelCase segment, with subsequent segments separated by '/' (e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters and slashes", feature)))
		}
		if i+1 < len(features) {
			switch next := features[i+1]; {
			case feature == next:
				errs = append(errs, field.Duplicate(p.Index(i+1), next))
			case feature > next:
				errs = append(errs, field.Invalid(p.Index(i+1), next, "list must be sorted alphabetically"))
			}
		}
	}
	return errs
}
