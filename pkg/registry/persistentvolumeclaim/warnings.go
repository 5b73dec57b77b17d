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

package persistentvolumeclaim

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// warnings are kube-apiserver's of a claim's create and update: the
// deprecated storage class annotation, and the spec's.
func warnings(obj, _ runtime.Object) []string {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	var warnings []string
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		warnings = append(warnings, fmt.Sprintf(`%s: deprecated since v1.8; use "storageClassName" attribute instead`,
			field.NewPath("metadata", "annotations").Key(corev1.BetaStorageClassAnnotation)))
	}
	return append(warnings, SpecWarnings(field.NewPath("spec"), &pvc.Spec)...)
}

// SpecWarnings returns kube-apiserver's warnings of a claim's spec at path
// (a claim's, a StatefulSet's claim template's, an ephemeral volume's): a
// fraction of a byte of storage.
func SpecWarnings(path *field.Path, spec *corev1.PersistentVolumeClaimSpec) []string {
	var warnings []string
	for _, r := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", spec.Resources.Requests}, {"limits", spec.Resources.Limits}} {
		value := r.list[corev1.ResourceStorage]
		if value.MilliValue()%1000 != 0 {
			warnings = append(warnings, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer",
				path.Child("resources").Child(r.name).Key(string(corev1.ResourceStorage)), value.String()))
		}
	}
	return warnings
}
