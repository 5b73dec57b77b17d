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
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodTemplateSpec is upstream's: a template's labels and
// annotations (at p.labels and p.annotations, as upstream's paths have
// them), the pod-specific annotations, the spec, the seccomp and AppArmor
// annotations matching the fields, and no ephemeral containers.
func ValidatePodTemplateSpec(template *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(template.Labels, p.Child("labels"))
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(template.Annotations, p.Child("annotations"))...)
	errs = append(errs, validateAnnotations(template.Annotations, &template.Spec, false, p.Child("annotations"))...)
	errs = append(errs, ValidatePodSpec(&template.Spec, p.Child("spec"))...)
	errs = append(errs, validateSeccompMatch(template.Annotations, &template.Spec, p.Child("spec"))...)
	errs = append(errs, validateAppArmorMatch(template.Annotations, &template.Spec, p.Child("spec"))...)
	if len(template.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(p.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// validateSeccompMatch is upstream's validateSeccompAnnotationsAndFields:
// the pod's and each container's deprecated seccomp annotation must name
// the profile its field has, if both are set.
func validateSeccompMatch(annotations map[string]string, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if annotation, ok := annotations[corev1.SeccompPodAnnotationKey]; ok {
			errs = append(errs, seccompMatch(annotation, sc.SeccompProfile, specPath.Child("securityContext", "seccompProfile"))...)
		}
	}
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			return
		}
		if annotation, ok := annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
			errs = append(errs, seccompMatch(annotation, c.SecurityContext.SeccompProfile, p.Child("securityContext", "seccompProfile"))...)
		}
	})
	return errs
}

func seccompMatch(annotation string, profile *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	typeErr := field.ErrorList{field.Forbidden(p.Child("type"), "seccomp type in annotation and field must match")}
	switch profile.Type {
	case corev1.SeccompProfileTypeUnconfined:
		if annotation != corev1.SeccompProfileNameUnconfined {
			return typeErr
		}
	case corev1.SeccompProfileTypeRuntimeDefault:
		if annotation != corev1.SeccompProfileRuntimeDefault && annotation != corev1.DeprecatedSeccompProfileDockerDefault {
			return typeErr
		}
	case corev1.SeccompProfileTypeLocalhost:
		name, ok := strings.CutPrefix(annotation, corev1.SeccompLocalhostProfileNamePrefix)
		if !ok {
			return typeErr
		}
		if profile.LocalhostProfile == nil || name != *profile.LocalhostProfile {
			return field.ErrorList{field.Forbidden(p.Child("localhostProfile"), "seccomp profile in annotation and field must match")}
		}
	}
	return nil
}
