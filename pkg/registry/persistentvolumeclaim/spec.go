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
	"slices"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolume"
)

// ValidateSpec is upstream's ValidatePersistentVolumeClaimSpec (with
// VolumeAttributesClass GA), of a claim's spec or an ephemeral volume's
// claim template.
func ValidateSpec(spec *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	if len(spec.AccessModes) != 0 {
		errs = append(errs, persistentvolume.ValidateAccessModes(spec.AccessModes, p.Child("accessModes"), "")...)
	}
	storagePath := p.Child("resources").Key(string(corev1.ResourceStorage))
	if size, ok := spec.Resources.Requests[corev1.ResourceStorage]; ok {
		errs = append(errs, persistentvolume.ValidatePositiveQuantity(size, storagePath)...)
	} else {
		errs = append(errs, field.Required(storagePath, ""))
	}
	errs = append(errs, classNameErrors(spec.StorageClassName, p.Child("storageClassName"))...)
	if m := spec.VolumeMode; m != nil && !slices.Contains(persistentvolume.SupportedVolumeModes, *m) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, persistentvolume.SupportedVolumeModes))
	}
	errs = append(errs, validateDataSources(spec.DataSource, spec.DataSourceRef, p)...)
	return append(errs, classNameErrors(spec.VolumeAttributesClassName, p.Child("volumeAttributesClassName"))...)
}

// classNameErrors is upstream's ValidateClassName of a name, if any.
func classNameErrors(name *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name != nil && *name != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*name, false) {
			errs = append(errs, field.Invalid(p, *name, msg))
		}
	}
	return errs
}

// validateDataSources is upstream's check of a claim's data sources.
func validateDataSources(ds *corev1.TypedLocalObjectReference, ref *corev1.TypedObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ds != nil {
		errs = append(errs, validateDataSource(ds.APIGroup, ds.Kind, ds.Name, p.Child("dataSource"))...)
	}
	ns := ""
	if ref != nil {
		errs = append(errs, validateDataSource(ref.APIGroup, ref.Kind, ref.Name, p.Child("dataSourceRef"))...)
		ns = ptr.Deref(ref.Namespace, "")
	}
	switch {
	case ns != "":
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(p.Child("dataSourceRef", "namespace"), ns, msg))
		}
		if ds != nil {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	case ds != nil && ref != nil && (!ptr.Equal(ds.APIGroup, ref.APIGroup) || ds.Kind != ref.Kind || ds.Name != ref.Name):
		errs = append(errs, field.Invalid(p, p.Child("dataSource"), "must match dataSourceRef"))
	}
	return errs
}

// validateDataSource is upstream's (and most of validateDataSourceRef).
func validateDataSource(apiGroup *string, kind, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	switch group := ptr.Deref(apiGroup, ""); {
	case group == "" && kind != "PersistentVolumeClaim":
		errs = append(errs, field.Invalid(p, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	case group != "":
		for _, msg := range validation.IsDNS1123Subdomain(group) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), group, msg))
		}
	}
	return errs
}
