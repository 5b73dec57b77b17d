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

package poddisruptionbudget

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Storage is the storage of poddisruptionbudgets and poddisruptionbudgets/status.
type Storage struct {
	PodDisruptionBudgets *registry.REST
	Status               *registry.StatusREST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"poddisruptionbudgets": s.PodDisruptionBudgets, "poddisruptionbudgets/status": s.Status}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of poddisruptionbudgets and poddisruptionbudgets/status.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	base := registry.NewStrategy(true)
	base.GenericMetadata = true // upstream checks only the spec
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, false)
	}
	// As upstream, a stored selector with an invalid label value may stay.
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		oldSelector := old.(*policyv1.PodDisruptionBudget).Spec.Selector
		keepInvalid := oldSelector != nil && len(metav1validation.ValidateLabelSelector(oldSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
		return validateSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, keepInvalid)
	}
	main, status := registry.SpecAndStatus{GroupVersion: "policy/v1", Generation: true}.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateStatus(&obj.(*policyv1.PodDisruptionBudget).Status)
	}
	// As upstream, a create's metadata is checked only once its spec is valid.
	main.ValidateCreateRequest = func(_ context.Context, obj runtime.Object) field.ErrorList { return main.ValidateFields(obj) }
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   policyv1.Resource("poddisruptionbudgets"),
		Singular:   "poddisruptionbudget",
		ShortNames: []string{"pdb"},
		New:        func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
		NewList:    func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
		Strategy:   main,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return &Storage{PodDisruptionBudgets: store, Status: registry.NewStatusREST(store, status)}, nil
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		return []any{pdb.Name, orNA(pdb.Spec.MinAvailable), orNA(pdb.Spec.MaxUnavailable), int64(pdb.Status.DisruptionsAllowed), registry.Age(pdb.CreationTimestamp)}
	},
}

func orNA(v *intstr.IntOrString) string {
	if v == nil {
		return "N/A"
	}
	return v.String()
}
