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
	"bytes"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
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
		cm, oldCM := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
		return append(ValidateImmutable(cm.Immutable, oldCM.Immutable, !maps.Equal(cm.Data, oldCM.Data), !maps.EqualFunc(cm.BinaryData, oldCM.BinaryData, bytes.Equal)), validate(cm)...)
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

func validate(cm *corev1.ConfigMap) field.ErrorList {
	return ValidateData(cm.Data, cm.BinaryData, field.NewPath("data"), field.NewPath("binaryData"))
}

// ValidateData checks keys and total size of configmap or secret data as upstream does.
func ValidateData(data map[string]string, binary map[string][]byte, dataPath, binaryPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for _, key := range slices.Sorted(maps.Keys(data)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, msg))
		}
		if _, dup := binary[key]; dup {
			errs = append(errs, field.Invalid(dataPath.Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(data[key])
	}
	for _, key := range slices.Sorted(maps.Keys(binary)) {
		for _, msg := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(binaryPath.Key(key), key, msg))
		}
		total += len(binary[key])
	}
	if total > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return errs
}

// ValidateImmutable forbids changes to an object marked immutable.
func ValidateImmutable(immutable, oldImmutable *bool, dataChanged, binaryChanged bool) field.ErrorList {
	if oldImmutable == nil || !*oldImmutable {
		return nil
	}
	const msg = "field is immutable when `immutable` is set"
	var errs field.ErrorList
	if immutable == nil || !*immutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), msg))
	}
	if dataChanged {
		errs = append(errs, field.Forbidden(field.NewPath("data"), msg))
	}
	if binaryChanged {
		errs = append(errs, field.Forbidden(field.NewPath("binaryData"), msg))
	}
	return errs
}
