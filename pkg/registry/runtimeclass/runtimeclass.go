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
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// NewStorage returns the storage of runtimeclasses.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.CreateOnUpdate = true // as upstream
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*nodev1.RuntimeClass)) }
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
		rc := obj.(*nodev1.RuntimeClass)
		errs := validate(rc)
		return append(errs, apimachineryvalidation.ValidateImmutableField(rc.Handler, old.(*nodev1.RuntimeClass).Handler, field.NewPath("handler"))...)
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

// validate is the cheap part of upstream's ValidateRuntimeClass: a handler
// that is a DNS label, overhead resources that are container resources with
// valid quantities, and a node selector of valid labels.
func validate(rc *nodev1.RuntimeClass) field.ErrorList {
	var errs field.ErrorList
	hp := field.NewPath("handler")
	if rc.Handler == "" {
		errs = append(errs, field.Required(hp, ""))
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSLabel(rc.Handler, false) {
			errs = append(errs, field.Invalid(hp, rc.Handler, msg))
		}
	}
	if rc.Overhead != nil {
		// Upstream checks the overhead as a container's limits, hence the path.
		lp := field.NewPath("overhead", "limits")
		for _, name := range slices.Sorted(maps.Keys(rc.Overhead.PodFixed)) {
			errs = append(errs, resourcequota.ValidateContainerResourceName(name, lp.Key(string(name)))...)
			errs = append(errs, resourcequota.ValidateQuantity(name, rc.Overhead.PodFixed[name], lp.Key(string(name)))...)
		}
	}
	if rc.Scheduling != nil && rc.Scheduling.NodeSelector != nil {
		errs = append(errs, metav1validation.ValidateLabels(rc.Scheduling.NodeSelector, field.NewPath("scheduling", "nodeSelector"))...)
	}
	return errs
}
