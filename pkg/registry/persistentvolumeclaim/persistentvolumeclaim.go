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
	"maps"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	volumehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolume"
)

// NewStorage returns the storage of persistentvolumeclaims and persistentvolumeclaims/status.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(true)
	// Runs after the status is cleared: a new claim is Pending.
	base.OnCreate = func(obj runtime.Object) {
		pvc := obj.(*corev1.PersistentVolumeClaim)
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
		keepDataSourceCompatible(&pvc.Spec, nil)
		normalizeDataSources(&pvc.Spec)
	}
	base.OnUpdate = func(obj, old runtime.Object) {
		pvc, oldPVC := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
		keepDataSourceCompatible(&pvc.Spec, &oldPVC.Spec)
		normalizeDataSources(&pvc.Spec)
		normalizeDataSources(&oldPVC.Spec) // as upstream, so that claims stored before validate
	}
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return ValidateSpec(&obj.(*corev1.PersistentVolumeClaim).Spec, field.NewPath("spec"))
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		pvc := obj.(*corev1.PersistentVolumeClaim)
		return append(ValidateSpec(&pvc.Spec, field.NewPath("spec")), validateUpdate(pvc, old.(*corev1.PersistentVolumeClaim))...)
	}
	base.Warnings = warnings
	main, status := registry.SpecAndStatus{GroupVersion: "v1"}.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateStatus(obj.(*corev1.PersistentVolumeClaim))
	}

	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("persistentvolumeclaims"),
		Singular:   "persistentvolumeclaim",
		ShortNames: []string{"pvc"},
		New:        func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
		NewList:    func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
		Strategy:   main,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"persistentvolumeclaims":        store,
		"persistentvolumeclaims/status": registry.NewStatusREST(store, status),
	}, nil
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Status", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]},
		{Name: "Volume", Type: "string", Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]},
		{Name: "Capacity", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]},
		{Name: "Access Modes", Type: "string", Description: corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]},
		{Name: "StorageClass", Type: "string", Description: "StorageClass of the pvc"},
		{Name: "VolumeAttributesClass", Type: "string", Description: "VolumeAttributesClass of the pvc"},
		registry.AgeColumn,
		{Name: "VolumeMode", Type: "string", Priority: 1, Description: corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]},
	},
	Cells: func(obj runtime.Object) []any {
		pvc := obj.(*corev1.PersistentVolumeClaim)
		phase := string(pvc.Status.Phase)
		if pvc.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		// As upstream: capacity and access modes are the bound volume's.
		capacity, modes := "", ""
		if pvc.Spec.VolumeName != "" {
			q := pvc.Status.Capacity[corev1.ResourceStorage]
			capacity, modes = q.String(), persistentvolume.AccessModesString(pvc.Status.AccessModes)
		}
		return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, volumehelpers.GetPersistentVolumeClaimClass(pvc),
			unset(pvc.Spec.VolumeAttributesClassName), registry.Age(pvc.CreationTimestamp), unset((*string)(pvc.Spec.VolumeMode))}
	},
}

// unset prints an optional string as kubectl does: "<unset>" for nil.
func unset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

// validateUpdate is upstream's ValidatePersistentVolumeClaimUpdate beyond
// the create rules: the spec is immutable but for a volumeName set once,
// a storageClassName set once (retroactive default class, or the value of
// the beta annotation), and, for bound claims, volumeAttributesClassName
// (not removed once applied) and resources.requests.storage, which may
// only grow, or shrink back to above status.capacity.
func validateUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	spec, oldSpec := *pvc.Spec.DeepCopy(), *old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = spec.VolumeName
	}
	if old.Spec.StorageClassName == nil && spec.StorageClassName != nil {
		annotation, annotated := old.Annotations[corev1.BetaStorageClassAnnotation]
		if !annotated || annotation == *spec.StorageClassName {
			spec.StorageClassName = nil
		}
	}
	if pvc.Status.Phase == corev1.ClaimBound {
		spec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if pvc.Status.Phase == corev1.ClaimBound && spec.Resources.Requests != nil {
		spec.Resources.Requests = maps.Clone(spec.Resources.Requests)
		spec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	if !apiequality.Semantic.DeepEqual(spec, oldSpec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			fmt.Sprintf("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", registry.Diff(oldSpec, spec))))
	}

	// A claim may shrink back to above the capacity it has, to recover
	// from a failed expansion (RecoverVolumeExpansionFailure, GA).
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if statusSize := old.Status.Capacity[corev1.ResourceStorage]; newSize.Cmp(oldSize) < 0 && newSize.Cmp(statusSize) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	// Upstream's path: "volumeMode".
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	// A class once applied (status.currentVolumeAttributesClassName) may not be removed.
	if c := pvc.Spec.VolumeAttributesClassName; old.Status.CurrentVolumeAttributesClassName != nil &&
		!apiequality.Semantic.DeepEqual(c, old.Spec.VolumeAttributesClassName) {
		vacPath := field.NewPath("spec", "volumeAttributesClassName")
		switch {
		case c == nil:
			errs = append(errs, field.Forbidden(vacPath, "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"))
		case *c == "":
			errs = append(errs, field.Forbidden(vacPath, "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"))
		}
	}
	return errs
}
