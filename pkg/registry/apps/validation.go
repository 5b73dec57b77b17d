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

package apps

import (
	"fmt"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// validateStatefulSet is upstream's ValidateStatefulSetSpec (with
// MaxUnavailableStatefulSet on and StatefulSetRecreateStrategy off, as in
// 1.37), and on update its ValidateStatefulSetUpdate: an invalid service
// name and claim templates kept, the template not checked if the old
// spec already fails, and the immutable fields kept.
func validateStatefulSet(ss, old *appsv1.StatefulSet) field.ErrorList {
	if old == nil {
		return validateStatefulSetSpec(&ss.Spec, false, false)
	}
	skipTemplate := len(validateStatefulSetSpec(&old.Spec, true, false)) > 0
	errs := validateStatefulSetSpec(&ss.Spec, true, skipTemplate)
	for _, f := range []struct {
		name     string
		now, was any
		shown    any // the value as upstream's message shows it
	}{
		{"selector", ss.Spec.Selector, old.Spec.Selector, ss.Spec.Selector},
		{"volumeClaimTemplates", ss.Spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates, registry.Internal(ss.Spec.VolumeClaimTemplates)},
		{"serviceName", ss.Spec.ServiceName, old.Spec.ServiceName, ss.Spec.ServiceName},
		{"podManagementPolicy", ss.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy, ss.Spec.PodManagementPolicy},
	} {
		if !apiequality.Semantic.DeepEqual(f.now, f.was) {
			errs = append(errs, field.Invalid(specPath.Child(f.name), f.shown, apimachineryvalidation.FieldImmutableErrorMsg))
		}
	}
	return errs
}

// validateStatefulSetSpec checks spec; update tolerates what an update
// cannot change (the service name, the claim templates); skipTemplate
// skips the template's own checks.
func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, update, skipTemplate bool) field.ErrorList {
	var errs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(specPath.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(specPath.Child("podManagementPolicy"), spec.PodManagementPolicy, fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	errs = append(errs, validateStatefulSetUpdateStrategy(&spec.UpdateStrategy, specPath.Child("updateStrategy"))...)
	if policy := spec.PersistentVolumeClaimRetentionPolicy; policy != nil {
		p := specPath.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, retentionPolicyType(policy.WhenDeleted, p.Child("whenDeleted"))...)
		errs = append(errs, retentionPolicyType(policy.WhenScaled, p.Child("whenScaled"))...)
	}
	if !update {
		for i := range spec.VolumeClaimTemplates {
			errs = append(errs, persistentvolumeclaim.ValidateSpec(&spec.VolumeClaimTemplates[i].Spec, specPath.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	errs = append(errs, nonNegative(replicas(spec.Replicas), specPath.Child("replicas"))...)
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		errs = append(errs, nonNegative(int64(spec.Ordinals.Start), specPath.Child("ordinals.start"))...) // sic: upstream's path
	}
	if !update && spec.ServiceName != "" {
		for _, msg := range validation.IsDNS1123Label(spec.ServiceName) {
			errs = append(errs, field.Invalid(specPath.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	errs = append(errs, validateSelector(spec.Selector, "statefulset")...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("selector"), spec.Selector, ""))
	} else {
		errs = append(errs, validateStatefulSetTemplate(spec, selector, skipTemplate)...)
	}
	return append(errs, restartsAlways(&spec.Template, "StatefulSet")...)
}

// validateStatefulSetTemplate is upstream's
// ValidatePodTemplateSpecForStatefulSet, of the template as the
// controller makes its pods: no hostname or subdomain (it sets them), and
// a volume for each claim template before the template's own (those of
// the same name dropped). Upstream checks the metadata twice; its
// generic store drops the repeated errors.
func validateStatefulSetTemplate(spec *appsv1.StatefulSetSpec, selector labels.Selector, skipTemplate bool) field.ErrorList {
	template := spec.Template.DeepCopy()
	template.Spec.Hostname, template.Spec.Subdomain = "", ""
	if len(spec.VolumeClaimTemplates) > 0 {
		claims := map[string]corev1.Volume{}
		for _, c := range spec.VolumeClaimTemplates {
			claims[c.Name] = corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}}
		}
		var volumes []corev1.Volume
		for _, name := range slices.Sorted(maps.Keys(claims)) { // upstream's order is a map's
			volumes = append(volumes, claims[name])
		}
		for _, v := range template.Spec.Volumes {
			if _, ok := claims[v.Name]; !ok {
				volumes = append(volumes, v)
			}
		}
		template.Spec.Volumes = volumes
	}
	p := specPath.Child("template")
	var errs field.ErrorList
	if !selector.Empty() && !selector.Matches(labels.Set(template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), template.Labels, "`selector` does not match template `labels`"))
	}
	if !skipTemplate {
		errs = append(errs, pod.ValidatePodTemplateSpec(template, p)...)
	}
	errs = append(errs, metav1validation.ValidateLabels(template.Labels, p.Child("labels"))...)
	return append(errs, apimachineryvalidation.ValidateAnnotations(template.Annotations, p.Child("annotations"))...)
}

func validateStatefulSetUpdateStrategy(s *appsv1.StatefulSetUpdateStrategy, p *field.Path) field.ErrorList {
	onlyRolling := fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)
	switch s.Type {
	case "":
		return field.ErrorList{field.Required(p, "")}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Invalid(p.Child("rollingUpdate"), registry.Internal(*s.RollingUpdate), onlyRolling)}
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		ru := s.RollingUpdate
		if ru == nil {
			return nil
		}
		p = p.Child("rollingUpdate")
		var errs field.ErrorList
		if ru.Partition != nil {
			errs = nonNegative(int64(*ru.Partition), p.Child("partition"))
		}
		if ru.MaxUnavailable != nil {
			errs = append(errs, positiveIntOrPercent(*ru.MaxUnavailable, p.Child("maxUnavailable"))...)
			if intOrPercent(*ru.MaxUnavailable) == 0 {
				errs = append(errs, field.Invalid(p.Child("maxUnavailable"), *ru.MaxUnavailable, "cannot be 0"))
			}
			errs = append(errs, notOver100Percent(*ru.MaxUnavailable, p.Child("maxUnavailable"))...)
		}
		return errs
	default:
		return field.ErrorList{field.Invalid(p, registry.Internal(*s), fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType))}
	}
	return nil
}

func retentionPolicyType(t appsv1.PersistentVolumeClaimRetentionPolicyType, p *field.Path) field.ErrorList {
	switch t {
	case appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, t, []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)})}
}
