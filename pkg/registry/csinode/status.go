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

package csinode

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
)

// Upstream's bounds on storage health reports.
const (
	maxHealthConditions = 16
	maxReasonLength     = 256
	maxMessageLength    = 1024
)

// The values a health condition takes, sorted as upstream lists them in
// errors (sets.List), but for volume modes, which it lists as written.
var (
	healthStatuses = []storagev1.StorageHealthStatusType{storagev1.StorageDegraded, storagev1.StorageUnreachable}
	accessModes    = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
	volumeModes    = []corev1.PersistentVolumeMode{corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeBlock}
)

// validateStatus is upstream's ValidateCSINodeStatusUpdate but for the
// metadata, which the generic store checks: one report per driver name,
// each well formed.
func validateStatus(status *storagev1.CSINodeStatus) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "storageHealth")
	seen := sets.New[string]()
	for i, h := range status.StorageHealth {
		if seen.Has(h.Name) {
			errs = append(errs, field.Duplicate(p.Index(i), h.Name))
		}
		seen.Insert(h.Name)
		errs = append(errs, validateStorageHealth(&h, p.Index(i))...)
	}
	return errs
}

// validateStorageHealth is upstream's validateStorageHealth: a driver
// name and at most 16 conditions, which are checked only if not too many.
func validateStorageHealth(h *storagev1.StorageHealth, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, volume.CSIDriverName(h.Name, p.Child("name"))...)
	}
	if len(h.HealthConditions) > maxHealthConditions {
		return append(errs, field.TooMany(p.Child("healthConditions"), len(h.HealthConditions), maxHealthConditions))
	}
	for i, c := range h.HealthConditions {
		errs = append(errs, validateHealthCondition(&c, p.Child("healthConditions").Index(i))...)
	}
	return errs
}

// validateHealthCondition is upstream's validateStorageHealthCondition.
func validateHealthCondition(c *storagev1.StorageHealthCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !slices.Contains(healthStatuses, c.Status) {
		errs = append(errs, field.NotSupported(p.Child("status"), c.Status, healthStatuses))
	}
	if c.Reason == "" {
		errs = append(errs, field.Required(p.Child("reason"), ""))
	} else {
		for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
			errs = append(errs, field.Invalid(p.Child("reason"), c.Reason, msg))
		}
		if len(c.Reason) > maxReasonLength {
			errs = append(errs, field.TooLong(p.Child("reason"), c.Reason, maxReasonLength))
		}
	}
	if len(c.Message) > maxMessageLength {
		errs = append(errs, field.TooLong(p.Child("message"), c.Message, maxMessageLength))
	}
	if m := c.AccessMode; m != nil && !slices.Contains(accessModes, *m) {
		errs = append(errs, field.NotSupported(p.Child("accessMode"), *m, accessModes))
	}
	if m := c.VolumeMode; m != nil && !slices.Contains(volumeModes, *m) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, volumeModes))
	}
	return errs
}
