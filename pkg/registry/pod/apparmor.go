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
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/warning"
)

// applyAppArmorVersionSkew is upstream's, run on a pod's create (KEP-24's
// version skew): a container's deprecated AppArmor annotation, where the
// container has no profile field, becomes its profile (unless that is the
// pod's), and is warned of (also when it names no valid profile).
func applyAppArmorVersionSkew(ctx context.Context, obj runtime.Object) {
	p := obj.(*corev1.Pod)
	if p.Spec.OS != nil && p.Spec.OS.Name == corev1.Windows {
		return
	}
	var podProfile *corev1.AppArmorProfile
	if p.Spec.SecurityContext != nil {
		podProfile = p.Spec.SecurityContext.AppArmorProfile
	}
	visitContainers(&p.Spec, nil, func(c *corev1.Container, _ *field.Path) {
		key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
		annotation, ok := p.Annotations[key]
		if !ok || (c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil) {
			return
		}
		profile := appArmorProfileOf(annotation)
		if !validAppArmorProfile(profile) {
			profile = nil
		}
		deprecated := profile == nil
		if profile != nil && !apiequality.Semantic.DeepEqual(profile, podProfile) {
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			c.SecurityContext.AppArmorProfile = profile
			deprecated = true
		}
		if deprecated {
			warning.AddWarning(ctx, "", fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, field.NewPath("metadata", "annotations").Key(key)))
		}
	})
}

// validAppArmorProfile is whether upstream's ValidateAppArmorProfileField
// passes a profile an annotation names: a Localhost one's name unpadded
// and at most PATH_MAX - 1 long.
func validAppArmorProfile(profile *corev1.AppArmorProfile) bool {
	if profile == nil || profile.Type != corev1.AppArmorProfileTypeLocalhost {
		return profile != nil
	}
	name := *profile.LocalhostProfile
	return strings.TrimSpace(name) == name && name != "" && len(name) <= 4095
}

// validateAppArmorAnnotations is the AppArmor part of upstream's
// ValidatePodSpecificAnnotations: each deprecated annotation names a
// container of the pod and a profile in the annotations' format.
func validateAppArmorAnnotations(annotations map[string]string, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		name, ok := strings.CutPrefix(key, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)
		if !ok {
			continue
		}
		found := false
		visitContainers(spec, nil, func(c *corev1.Container, _ *field.Path) { found = found || c.Name == name })
		if !found {
			errs = append(errs, field.Invalid(p.Key(key), name, "container not found"))
		}
		switch profile := annotations[key]; {
		case profile == "", profile == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault, profile == corev1.DeprecatedAppArmorBetaProfileNameUnconfined,
			strings.HasPrefix(profile, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		default:
			errs = append(errs, field.Invalid(p.Key(key), profile, fmt.Sprintf("invalid AppArmor profile name: %q", profile)))
		}
	}
	return errs
}

// validateAppArmorMatch is upstream's validateAppArmorAnnotationsAndFieldsMatchOnCreate:
// a container's deprecated annotation must name the profile its field (or
// the pod's) has.
func validateAppArmorMatch(annotations map[string]string, spec *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return nil
	}
	var podProfile *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podProfile = spec.SecurityContext.AppArmorProfile
	}
	var errs field.ErrorList
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		profile := podProfile
		if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			profile = c.SecurityContext.AppArmorProfile
		}
		annotation, ok := annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		if profile == nil || !ok {
			return
		}
		p = p.Child("securityContext", "appArmorProfile")
		typeErr := field.Forbidden(p.Child("type"), "apparmor type in annotation and field must match")
		switch profile.Type {
		case corev1.AppArmorProfileTypeUnconfined:
			if annotation != corev1.DeprecatedAppArmorBetaProfileNameUnconfined {
				errs = append(errs, typeErr)
			}
		case corev1.AppArmorProfileTypeRuntimeDefault:
			if annotation != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault {
				errs = append(errs, typeErr)
			}
		case corev1.AppArmorProfileTypeLocalhost:
			name, isLocalhost := strings.CutPrefix(annotation, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
			switch {
			case !isLocalhost:
				errs = append(errs, typeErr)
			case profile.LocalhostProfile == nil || name != *profile.LocalhostProfile:
				errs = append(errs, field.Forbidden(p.Child("localhostProfile"), "apparmor profile in annotation and field must match"))
			}
		}
	})
	return errs
}
