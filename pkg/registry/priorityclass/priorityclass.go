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

package priorityclass

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The priority bounds of upstream's pkg/apis/scheduling.
const (
	// HighestUserDefinablePriority is the highest value of a class not named system-*.
	HighestUserDefinablePriority = int32(1000000000)
	systemCriticalPriority       = 2 * HighestUserDefinablePriority
	systemPrefix                 = "system-"
)

// systemClasses are upstream's system priority classes, which the server
// creates on start: the only classes named system-*, with these values.
var systemClasses = map[string]int32{
	"system-node-critical":    systemCriticalPriority + 1000,
	"system-cluster-critical": systemCriticalPriority,
}

// SystemClasses returns upstream's system priority classes, as
// kube-apiserver creates them on start.
func SystemClasses() []*schedulingv1.PriorityClass {
	return []*schedulingv1.PriorityClass{
		{
			ObjectMeta:  metav1.ObjectMeta{Name: "system-node-critical"},
			Value:       systemClasses["system-node-critical"],
			Description: "Used for system critical pods that must not be moved from their current node.",
		},
		{
			ObjectMeta:  metav1.ObjectMeta{Name: "system-cluster-critical"},
			Value:       systemClasses["system-cluster-critical"],
			Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
		},
	}
}

// REST is the priority classes storage; Delete refuses the system classes.
type REST struct {
	*registry.REST
}

// NewStorage returns the storage of priorityclasses.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.OnCreate = func(obj runtime.Object) { obj.(*schedulingv1.PriorityClass).Generation = 1 }
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*schedulingv1.PriorityClass)) }
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*schedulingv1.PriorityClass), old.(*schedulingv1.PriorityClass))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   schedulingv1.Resource("priorityclasses"),
		Singular:   "priorityclass",
		ShortNames: []string{"pc"},
		New:        func() runtime.Object { return &schedulingv1.PriorityClass{} },
		NewList:    func() runtime.Object { return &schedulingv1.PriorityClassList{} },
		Strategy:   s,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"priorityclasses": &REST{REST: store}}, nil
}

// Delete refuses to delete a system priority class, as upstream does.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	if _, ok := systemClasses[name]; ok {
		return nil, false, apierrors.NewForbidden(schedulingv1.Resource("priorityclasses"), name, errors.New("this is a system priority class and cannot be deleted"))
	}
	return r.REST.Delete(ctx, name, deleteValidation, options)
}

var docs = schedulingv1.PriorityClass{}.SwaggerDoc()

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Value", Type: "integer", Description: docs["value"]},
		{Name: "Global-Default", Type: "boolean", Description: docs["globalDefault"]},
		registry.AgeColumn,
		{Name: "PreemptionPolicy", Type: "string", Description: docs["preemptionPolicy"]},
	},
	Cells: func(obj runtime.Object) []any {
		pc := obj.(*schedulingv1.PriorityClass)
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, registry.Age(pc.CreationTimestamp), policy}
	},
}

var supportedPreemptionPolicies = []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}

// validate is upstream's ValidatePriorityClass: a system- name only for
// the system classes, with their values; other values at most 1e9; a known
// preemption policy.
func validate(pc *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPrefix) {
		if err := checkSystemClass(pc); err != nil {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"),
				"priority class names with '"+systemPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", HighestUserDefinablePriority)))
	}
	if p := pc.PreemptionPolicy; p != nil {
		switch *p {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		case "":
			errs = append(errs, field.Required(field.NewPath("preemptionPolicy"), ""))
		default:
			errs = append(errs, field.NotSupported(field.NewPath("preemptionPolicy"), *p, supportedPreemptionPolicies))
		}
	}
	return errs
}

// checkSystemClass is upstream's IsKnownSystemPriorityClass.
func checkSystemClass(pc *schedulingv1.PriorityClass) error {
	value, ok := systemClasses[pc.Name]
	switch {
	case !ok:
		return fmt.Errorf("%v is not a known system priority class", pc.Name)
	case pc.Value != value:
		return fmt.Errorf("value of %v PriorityClass must be %v", pc.Name, value)
	case pc.GlobalDefault:
		return fmt.Errorf("globalDefault of %v PriorityClass must be %v", pc.Name, false)
	}
	return nil
}

// validateUpdate is upstream's ValidatePriorityClassUpdate: value and
// preemptionPolicy are immutable (and nothing else is checked again).
func validateUpdate(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, apimachineryvalidation.ValidateImmutableField(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}
