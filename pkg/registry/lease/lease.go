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

package lease

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of leases.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.CreateOnUpdate = true
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(&obj.(*coordinationv1.Lease).Spec) }
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: coordinationv1.Resource("leases"),
		Singular: "lease",
		New:      func() runtime.Object { return &coordinationv1.Lease{} },
		NewList:  func() runtime.Object { return &coordinationv1.LeaseList{} },
		Strategy: s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{registry.NameColumn, {Name: "Holder", Type: "string", Description: "The holder of the lease."}, registry.AgeColumn},
			Cells: func(obj runtime.Object) []any {
				l := obj.(*coordinationv1.Lease)
				holder := ""
				if l.Spec.HolderIdentity != nil {
					holder = *l.Spec.HolderIdentity
				}
				return []any{l.Name, holder, registry.Age(l.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"leases": store}, nil
}

func validate(spec *coordinationv1.LeaseSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	return errs
}
