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
	s.GenericMetadata = true
	s.CreateOnUpdate = true
	s.ConditionalUpdate = true
	s.OnCreate = func(obj runtime.Object) { dropDisabledFields(&obj.(*coordinationv1.Lease).Spec, nil) }
	s.OnUpdate = func(obj, old runtime.Object) {
		dropDisabledFields(&obj.(*coordinationv1.Lease).Spec, &old.(*coordinationv1.Lease).Spec)
	}
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
