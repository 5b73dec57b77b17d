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

package configmap

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of configmaps.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.ConfigMap)) }
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("configmaps"),
		Singular:   "configmap",
		ShortNames: []string{"cm"},
		New:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewList:    func() runtime.Object { return &corev1.ConfigMapList{} },
		Strategy:   s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{registry.NameColumn, {Name: "Data", Type: "string", Description: "Number of keys."}, registry.AgeColumn},
			Cells: func(obj runtime.Object) []any {
				cm := obj.(*corev1.ConfigMap)
				return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), registry.Age(cm.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"configmaps": store}, nil
}
