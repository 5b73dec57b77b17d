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
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// resizeStatuses are the values of status.allocatedResourceStatuses,
// sorted as upstream's messages list them.
var resizeStatuses = []corev1.ClaimResourceStatus{
	corev1.PersistentVolumeClaimControllerResizeInProgress, corev1.PersistentVolumeClaimControllerResizeInfeasible,
	corev1.PersistentVolumeClaimNodeResizeInProgress, corev1.PersistentVolumeClaimNodeResizeInfeasible,
	corev1.PersistentVolumeClaimNodeResizePending,
}

// validateStatus is upstream's ValidatePersistentVolumeClaimStatusUpdate
// (RecoverVolumeExpansionFailure GA), but for the volume health status
// (VolumeHealth is not served): a resourceVersion and access modes (upstream's
// paths), capacity and allocated resources of valid quantities, allocated
// resources and their resize statuses for storage only. Upstream ranges over
// maps there; ours sorts the keys.
func validateStatus(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	if pvc.ResourceVersion == "" {
		errs = append(errs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	if len(pvc.Spec.AccessModes) == 0 {
		errs = append(errs, field.Required(field.NewPath("Spec", "accessModes"), "")) // sic
	}
	status := &pvc.Status
	capPath := field.NewPath("status", "capacity")
	for _, name := range slices.Sorted(maps.Keys(status.Capacity)) {
		errs = append(errs, validQuantity(status.Capacity[name], capPath.Key(string(name)))...)
	}
	resizePath := field.NewPath("status", "allocatedResourceStatuses")
	for _, name := range slices.Sorted(maps.Keys(status.AllocatedResourceStatuses)) {
		errs = append(errs, resourceKey(string(name), resizePath)...)
		if !slices.Contains(resizeStatuses, status.AllocatedResourceStatuses[name]) {
			errs = append(errs, field.NotSupported(resizePath, name, resizeStatuses))
		}
	}
	allocPath := field.NewPath("status", "allocatedResources")
	for _, name := range slices.Sorted(maps.Keys(status.AllocatedResources)) {
		if keyErrs := resourceKey(string(name), allocPath); len(keyErrs) > 0 {
			errs = append(errs, keyErrs...)
			continue
		}
		p := allocPath.Key(string(name))
		if qErrs := validQuantity(status.AllocatedResources[name], p); len(qErrs) > 0 {
			errs = append(errs, qErrs...)
		} else {
			errs = append(errs, resourcequota.ValidateQuantity(corev1.ResourceStorage, status.AllocatedResources[name], p)...)
		}
	}
	return errs
}

// validQuantity is upstream's validateBasicResource.
func validQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Value() < 0 {
		return field.ErrorList{field.Invalid(p, q.Value(), "must be a valid resource quantity")}
	}
	return nil
}

// resourceKey is upstream's validatePersistentVolumeClaimResourceKey: a
// qualified name, and storage if a native resource's.
func resourceKey(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	native := !strings.Contains(name, "/") || strings.Contains(name, corev1.ResourceDefaultNamespacePrefix)
	if len(errs) == 0 && native && name != string(corev1.ResourceStorage) {
		errs = append(errs, field.NotSupported(p, name, []corev1.ResourceName{corev1.ResourceStorage}))
	}
	return errs
}
