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

package runtimeclass

import (
	"fmt"
	"maps"
	"slices"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of runtimeclasses.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.GenericMetadata = true
	s.CreateOnUpdate = true // as upstream
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateClass(obj.(*nodev1.RuntimeClass), nil) }
	s.Warnings = func(obj, _ runtime.Object) []string { // deprecated node labels in scheduling's selector
		var warnings []string
		if sched := obj.(*nodev1.RuntimeClass).Scheduling; sched != nil {
			for _, key := range slices.Sorted(maps.Keys(sched.NodeSelector)) {
				if msg, ok := node.DeprecatedLabel(key); ok {
					warnings = append(warnings, fmt.Sprintf("%s: %s", field.NewPath("scheduling", "nodeSelector"), msg))
				}
			}
		}
		return warnings
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateClass(obj.(*nodev1.RuntimeClass), old.(*nodev1.RuntimeClass))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: nodev1.Resource("runtimeclasses"),
		Singular: "runtimeclass",
		New:      func() runtime.Object { return &nodev1.RuntimeClass{} },
		NewList:  func() runtime.Object { return &nodev1.RuntimeClassList{} },
		Strategy: s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				registry.NameColumn,
				// Upstream's description (an ObjectMeta doc it does not have: empty).
				{Name: "Handler", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["handler"]},
				registry.AgeColumn,
			},
			Cells: func(obj runtime.Object) []any {
				rc := obj.(*nodev1.RuntimeClass)
				return []any{rc.Name, rc.Handler, registry.Age(rc.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"runtimeclasses": store}, nil
}
