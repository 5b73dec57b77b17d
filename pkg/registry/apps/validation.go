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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

var specPath = field.NewPath("spec")

// validateFields checks what upstream checks of every workload: replicas,
// a non-empty selector that matches the template's labels, and a pod
// template that restarts always.
func (w workload) validateFields(obj runtime.Object) field.ErrorList {
	replicas, selector, template := w.spec(obj)
	var errs field.ErrorList
	if replicas != nil && *replicas < 0 {
		errs = append(errs, field.Invalid(specPath.Child("replicas"), *replicas, "must be greater than or equal to 0"))
	}
	errs = append(errs, pod.ValidateSelectorAndTemplate(selector, template, specPath)...)
	if rp := template.Spec.RestartPolicy; rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(specPath.Child("template", "spec", "restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if w.validate != nil {
		errs = append(errs, w.validate(obj)...)
	}
	return errs
}

// validateFieldsUpdate adds to validateFields that apps/v1 selectors are immutable.
func (w workload) validateFieldsUpdate(obj, old runtime.Object) field.ErrorList {
	errs := w.validateFields(obj)
	_, selector, _ := w.spec(obj)
	if _, oldSelector, _ := w.spec(old); !apiequality.Semantic.DeepEqual(selector, oldSelector) {
		errs = append(errs, field.Invalid(specPath.Child("selector"), selector, "field is immutable"))
	}
	if w.validateUpdate != nil {
		errs = append(errs, w.validateUpdate(obj, old)...)
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy) field.ErrorList {
	p := specPath.Child("strategy")
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if ru := s.RollingUpdate; ru != nil && isZero(ru.MaxUnavailable) && isZero(ru.MaxSurge) {
			return field.ErrorList{field.Invalid(p.Child("rollingUpdate", "maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

func isZero(v *intstr.IntOrString) bool {
	return v == nil || v.String() == "0" || v.String() == "0%"
}

// validateStatefulSetUpdate refuses changes to the StatefulSet spec fields
// upstream keeps immutable (the selector is every workload's), one error
// each, as upstream's.
func validateStatefulSetUpdate(ss, old *appsv1.StatefulSet) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name     string
		now, was any
	}{
		{"volumeClaimTemplates", ss.Spec.VolumeClaimTemplates, old.Spec.VolumeClaimTemplates},
		{"serviceName", ss.Spec.ServiceName, old.Spec.ServiceName},
		{"podManagementPolicy", ss.Spec.PodManagementPolicy, old.Spec.PodManagementPolicy},
	} {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(f.now, f.was, specPath.Child(f.name))...)
	}
	return errs
}
