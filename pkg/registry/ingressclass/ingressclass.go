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

package ingressclass

import (
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of ingressclasses.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.OnCreate = func(obj runtime.Object) { obj.(*networkingv1.IngressClass).Generation = 1 }
	s.OnUpdate = func(obj, old runtime.Object) {
		ic, oldIC := obj.(*networkingv1.IngressClass), old.(*networkingv1.IngressClass)
		if !apiequality.Semantic.DeepEqual(ic.Spec, oldIC.Spec) {
			ic.Generation = oldIC.Generation + 1
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateClass(&obj.(*networkingv1.IngressClass).Spec, nil)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateClass(&obj.(*networkingv1.IngressClass).Spec, &old.(*networkingv1.IngressClass).Spec)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: networkingv1.Resource("ingressclasses"),
		Singular: "ingressclass",
		New:      func() runtime.Object { return &networkingv1.IngressClass{} },
		NewList:  func() runtime.Object { return &networkingv1.IngressClassList{} },
		Strategy: s,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"ingressclasses": store}, nil
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		ic := obj.(*networkingv1.IngressClass)
		name := ic.Name
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			name += " (default)"
		}
		parameters := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			parameters = p.Kind
			if p.APIGroup != nil {
				parameters += "." + *p.APIGroup
			}
			parameters += "/" + p.Name
		}
		return []any{name, ic.Spec.Controller, parameters, registry.Age(ic.CreationTimestamp)}
	},
}
