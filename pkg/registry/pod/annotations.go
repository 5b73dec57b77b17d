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

package pod

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/pod/internal/core"
)

var annotationsPath = field.NewPath("metadata", "annotations")

// validateAnnotations is upstream's ValidatePodSpecificAnnotations: a
// mirror pod names its node; the tolerations annotation decodes and its
// tolerations are valid; the deletion cost is an int32 (unless
// anyCost); the seccomp and AppArmor annotations name valid profiles.
// annotationsPath is where they are (a pod's, or a template's).
func validateAnnotations(annotations map[string]string, spec *corev1.PodSpec, anyCost bool, annotationsPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if value, ok := annotations[corev1.MirrorPodAnnotationKey]; ok && spec.NodeName == "" {
		errs = append(errs, field.Invalid(annotationsPath.Key(corev1.MirrorPodAnnotationKey), value, "must set spec.nodeName if mirror pod annotation is set"))
	}
	if value := annotations[corev1.TolerationsAnnotationKey]; value != "" {
		var tolerations []core.Toleration
		if err := json.Unmarshal([]byte(value), &tolerations); err != nil {
			errs = append(errs, field.Invalid(annotationsPath, corev1.TolerationsAnnotationKey, err.Error()))
		} else {
			var v1 []corev1.Toleration
			for _, t := range tolerations {
				v1 = append(v1, t.V1())
			}
			errs = append(errs, ValidateTolerations(v1, annotationsPath.Child(corev1.TolerationsAnnotationKey))...)
		}
	}
	if cost, ok := annotations[corev1.PodDeletionCost]; ok && !anyCost && !validDeletionCost(cost) {
		errs = append(errs, field.Invalid(annotationsPath.Key(corev1.PodDeletionCost), cost, "must be a 32bit integer"))
	}
	if profile, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
		errs = append(errs, validateSeccompProfile(profile, annotationsPath.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for _, key := range slices.Sorted(maps.Keys(annotations)) { // upstream's order is a map's
		if strings.HasPrefix(key, corev1.SeccompContainerAnnotationKeyPrefix) {
			errs = append(errs, validateSeccompProfile(annotations[key], annotationsPath.Child(key))...)
		}
	}
	return append(errs, validateAppArmorAnnotations(annotations, spec, annotationsPath)...)
}

// validDeletionCost is whether upstream's GetDeletionCostFromPodAnnotations
// reads value: an int32 in decimal, no sign but '-', no leading zero.
func validDeletionCost(value string) bool {
	if value == "" || !(value[0] == '-' || value == "0" || value[0] >= '1' && value[0] <= '9') {
		return false
	}
	_, err := strconv.ParseInt(value, 10, 32)
	return err == nil
}

// validateSeccompProfile is upstream's ValidateSeccompProfile of an
// annotation's value.
func validateSeccompProfile(profile string, p *field.Path) field.ErrorList {
	switch {
	case profile == corev1.SeccompProfileRuntimeDefault, profile == corev1.DeprecatedSeccompProfileDockerDefault, profile == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(profile, corev1.SeccompLocalhostProfileNamePrefix):
		return validateLocalDescendingPath(strings.TrimPrefix(profile, corev1.SeccompLocalhostProfileNamePrefix), p)
	}
	return field.ErrorList{field.Invalid(p, profile, "must be a valid seccomp profile")}
}

// validateAnnotationUpdates is upstream's ValidatePodSpecificAnnotationUpdates:
// annotationChanges, and the new annotations valid (a deletion cost as
// invalid as the old one kept).
func validateAnnotationUpdates(p, old *corev1.Pod) field.ErrorList {
	return append(annotationChanges(p, old), validateAnnotations(p.Annotations, &p.Spec, invalidCost(old), annotationsPath)...)
}

// annotationChanges refuses an AppArmor or mirror pod annotation added,
// changed or removed. An update, which has validated the new annotations
// before (upstream's validatePodMetadataAndSpec), needs only this of
// upstream's ValidatePodSpecificAnnotationUpdates: its second validation
// of them repeats the first's errors, which the response drops.
func annotationChanges(p, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(old.Annotations)) { // upstream's order is a map's
		if v, ok := p.Annotations[k]; ok && v == old.Annotations[k] {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(annotationsPath.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			errs = append(errs, field.Forbidden(annotationsPath.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Annotations)) {
		if _, ok := old.Annotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(annotationsPath.Key(k), "may not add AppArmor annotations"))
		}
		if k == corev1.MirrorPodAnnotationKey {
			errs = append(errs, field.Forbidden(annotationsPath.Key(k), "may not add mirror pod annotation"))
		}
	}
	return errs
}

// invalidCost is whether old's deletion cost is invalid, which lets its
// update keep it (upstream's AllowInvalidPodDeletionCost).
func invalidCost(old *corev1.Pod) bool {
	cost, ok := old.Annotations[corev1.PodDeletionCost]
	return ok && !validDeletionCost(cost)
}
