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

package storageversionmigration

import (
	"strings"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "storagemigration.k8s.io/v1"

// NewStorage returns the storage of storageversionmigrations and of their
// status. As upstream's strategies: a create clears status and an update
// keeps it; the spec never changes once created; a status update keeps
// spec and the metadata a status write may not change, and updates name
// the resourceVersion they replace.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(false)
	base.ConditionalUpdate = true
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(&obj.(*storagemigrationv1.StorageVersionMigration).Spec)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration))
	}
	main, status := registry.SpecAndStatus{GroupVersion: groupVersion, StatusKeepsMetadata: true}.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateStatusUpdate(obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration))
	}
	status.ResetFields = registry.Fieldpaths(groupVersion, "metadata", "spec")
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: storagemigrationv1.Resource("storageversionmigrations"),
		Singular: "storageversionmigration",
		New:      func() runtime.Object { return &storagemigrationv1.StorageVersionMigration{} },
		NewList:  func() runtime.Object { return &storagemigrationv1.StorageVersionMigrationList{} },
		Strategy: main,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"storageversionmigrations":        store,
		"storageversionmigrations/status": registry.NewStatusREST(store, status),
	}, nil
}

var (
	resourcePath   = field.NewPath("spec", "resource", "resource")
	groupPath      = field.NewPath("spec", "resource", "group")
	conditionsPath = field.NewPath("status", "conditions")
	statusRVPath   = field.NewPath("status", "resourceVersion")
)

// validateSpec is upstream's ValidateStorageVersionMigration but for the
// metadata (the strategy checks it): a resource, a DNS-1035 label, and a
// group, if any, a DNS-1123 subdomain (as an APIService's).
func validateSpec(spec *storagemigrationv1.StorageVersionMigrationSpec) field.ErrorList {
	var errs field.ErrorList
	if r := spec.Resource.Resource; r == "" {
		errs = append(errs, field.Required(resourcePath, "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(r); len(msgs) > 0 {
		errs = append(errs, field.Invalid(resourcePath, r, strings.Join(msgs, ",")))
	}
	if g := spec.Resource.Group; g != "" {
		if msgs := validation.IsDNS1123Subdomain(g); len(msgs) > 0 {
			errs = append(errs, field.Invalid(groupPath, g, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// internalSpec prints as upstream's internal StorageVersionMigrationSpec
// does in an error (it has no JSON tags): {"Resource":{...}}.
type internalSpec struct{ Resource metav1.GroupResource }

// validateUpdate is upstream's ValidateStorageVersionMigrationUpdate but
// for the metadata's update rules (k8s.io/apiserver's rest.ValidateUpdate
// checks them): the spec checked again, and immutable.
func validateUpdate(svm, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	errs := validateSpec(&svm.Spec)
	if svm.Spec != old.Spec {
		errs = append(errs, field.Invalid(field.NewPath("spec"), internalSpec{Resource: svm.Spec.Resource}, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateStatusUpdate is upstream's
// ValidateStorageVersionMigrationStatusUpdate but for the metadata: a
// resourceVersion that is a resource version and, once set, never
// changes; valid conditions, Succeeded and Failed never both True, and
// neither True again once it was.
func validateStatusUpdate(svm, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	rv := svm.Status.ResourceVersion
	if rv != "" {
		// Upstream compares the version with itself: only its form can fail.
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(statusRVPath, rv, err.Error()))
		}
	}
	errs = append(errs, metav1validation.ValidateConditions(svm.Status.Conditions, conditionsPath)...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != rv {
		errs = append(errs, field.Invalid(statusRVPath, rv, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	succeeded, failed := isTrue(svm, storagemigrationv1.MigrationSucceeded), isTrue(svm, storagemigrationv1.MigrationFailed)
	if succeeded && failed {
		errs = append(errs, field.Invalid(conditionsPath, svm.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	if isTrue(old, storagemigrationv1.MigrationSucceeded) && !succeeded {
		errs = append(errs, field.Invalid(conditionsPath, svm.Status.Conditions, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, storagemigrationv1.MigrationFailed) && !failed {
		errs = append(errs, field.Invalid(conditionsPath, svm.Status.Conditions, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

// isTrue says whether svm's first condition of type t is True.
func isTrue(svm *storagemigrationv1.StorageVersionMigration, t storagemigrationv1.MigrationConditionType) bool {
	return meta.IsStatusConditionTrue(svm.Status.Conditions, string(t))
}

// table is upstream's printStorageVersionMigration: NAME, RESOURCE (the
// group resource, resource.group) and STATUS, the type of the last True
// condition among Running, Succeeded and Failed, else Unknown.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		// Upstream's Name column has no "name" format.
		{Name: "Name", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
		{Name: "Status", Type: "string", Description: "Status of the migration"},
	},
	Cells: func(obj runtime.Object) []any {
		svm := obj.(*storagemigrationv1.StorageVersionMigration)
		status := "Unknown"
		for _, c := range svm.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				continue
			}
			switch storagemigrationv1.MigrationConditionType(c.Type) {
			case storagemigrationv1.MigrationRunning, storagemigrationv1.MigrationSucceeded, storagemigrationv1.MigrationFailed:
				status = c.Type
			}
		}
		return []any{svm.Name, svm.Spec.Resource.String(), status}
	},
}
