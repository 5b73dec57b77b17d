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

package namespace

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateFinalizers checks spec.finalizers as upstream does: its create
// and update name the list in their errors, its finalize (indexed) the item.
func validateFinalizers(ns *corev1.Namespace, indexed bool) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "finalizers")
	for i, f := range ns.Spec.Finalizers {
		p := path
		if indexed {
			p = path.Index(i)
		}
		errs = append(errs, validateFinalizerName(string(f), p)...)
	}
	return errs
}

// validateFinalizerName checks a finalizer is a qualified name and, when
// it has no prefix, one of the standard ones.
func validateFinalizerName(name string, path *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateFinalizerName(name, path)
	if !strings.Contains(name, "/") && !isStandardFinalizer(name) {
		errs = append(errs, field.Invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
	}
	return errs
}

func isStandardFinalizer(name string) bool {
	switch name {
	case string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents:
		return true
	}
	return false
}

// validateStatusUpdate checks the phase a status update sets against the
// namespace's deletion, as upstream's ValidateNamespaceStatusUpdate does.
func validateStatusUpdate(ns *corev1.Namespace) field.ErrorList {
	path := field.NewPath("status", "Phase") // sic, upstream's
	phase := ns.Status.Phase
	if ns.DeletionTimestamp.IsZero() {
		if phase != corev1.NamespaceActive {
			return field.ErrorList{field.Invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")}
		}
	} else if phase != corev1.NamespaceTerminating {
		return field.ErrorList{field.Invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}
