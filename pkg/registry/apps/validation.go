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
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// validateStatefulSet checks what upstream checks of every workload:
// replicas, a non-empty selector that matches the template's labels, and
// a pod template that restarts always; on update, the fields upstream
// keeps immutable. (Upstream's ValidateStatefulSetSpec is not ported.)
func validateStatefulSet(ss, old *appsv1.StatefulSet) field.ErrorList {
	errs := nonNegative(replicas(ss.Spec.Replicas), specPath.Child("replicas"))
	errs = append(errs, pod.ValidateSelectorAndTemplate(ss.Spec.Selector, &ss.Spec.Template, specPath)...)
	if rp := ss.Spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(specPath.Child("template", "spec", "restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if old == nil {
		return errs
	}
	errs = append(errs, selectorImmutable(ss.Spec.Selector, old.Spec.Selector)...)
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
