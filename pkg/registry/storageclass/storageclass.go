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

package storageclass

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of storageclasses.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateClass(obj.(*storagev1.StorageClass), nil) }
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateClass(obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass))
	}
	s.Warnings = func(obj, _ runtime.Object) []string { // deprecated node labels in allowedTopologies
		var warnings []string
		for i, t := range obj.(*storagev1.StorageClass).AllowedTopologies {
			for j, e := range t.MatchLabelExpressions {
				if msg, ok := node.DeprecatedLabel(e.Key); ok {
					warnings = append(warnings, fmt.Sprintf("%s: %s", field.NewPath("allowedTopologies").Index(i).Child("matchLabelExpressions").Index(j).Child("key"), msg))
				}
			}
		}
		return warnings
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   storagev1.Resource("storageclasses"),
		Singular:   "storageclass",
		ShortNames: []string{"sc"},
		New:        func() runtime.Object { return &storagev1.StorageClass{} },
		NewList:    func() runtime.Object { return &storagev1.StorageClassList{} },
		Strategy:   s,
	})
	if err != nil {
		return nil, err
	}
	store.TableConvertor = tableConvertor{}
	return map[string]rest.Storage{"storageclasses": store}, nil
}

// The default class annotations upstream's printer reads.
const (
	isDefaultAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

var docs = storagev1.StorageClass{}.SwaggerDoc()

var columns = []metav1.TableColumnDefinition{
	registry.NameColumn,
	{Name: "Provisioner", Type: "string", Description: docs["provisioner"]},
	{Name: "ReclaimPolicy", Type: "string", Description: docs["reclaimPolicy"]},
	{Name: "VolumeBindingMode", Type: "string", Description: docs["volumeBindingMode"]},
	{Name: "AllowVolumeExpansion", Type: "string", Description: docs["allowVolumeExpansion"]},
	registry.AgeColumn,
}

// tableConvertor prints as upstream's printer: in a list, the effective
// default class (the newest one annotated as default; on a tie, the first
// by name) is "NAME (default)"; a single object never is.
type tableConvertor struct{}

func (tableConvertor) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	effectiveDefault := ""
	if list, ok := object.(*storagev1.StorageClassList); ok {
		effectiveDefault = defaultClass(list.Items)
	}
	return registry.Table{Columns: columns, Cells: func(obj runtime.Object) []any {
		return cells(obj.(*storagev1.StorageClass), effectiveDefault)
	}}.ConvertToTable(ctx, object, tableOptions)
}

func cells(sc *storagev1.StorageClass, effectiveDefault string) []any {
	name := sc.Name
	if effectiveDefault != "" && name == effectiveDefault {
		name += " (default)"
	}
	reclaim := string(corev1.PersistentVolumeReclaimDelete)
	if sc.ReclaimPolicy != nil {
		reclaim = string(*sc.ReclaimPolicy)
	}
	binding := string(storagev1.VolumeBindingImmediate)
	if sc.VolumeBindingMode != nil {
		binding = string(*sc.VolumeBindingMode)
	}
	expansion := sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
	return []any{name, sc.Provisioner, reclaim, binding, expansion, registry.Age(sc.CreationTimestamp)}
}

func defaultClass(items []storagev1.StorageClass) string {
	var found *storagev1.StorageClass
	for i := range items {
		sc := &items[i]
		if sc.Annotations[isDefaultAnnotation] != "true" && sc.Annotations[betaIsDefaultAnnotation] != "true" {
			continue
		}
		if found == nil || sc.CreationTimestamp.After(found.CreationTimestamp.Time) ||
			sc.CreationTimestamp.Equal(&found.CreationTimestamp) && sc.Name < found.Name {
			found = sc
		}
	}
	if found == nil {
		return ""
	}
	return found.Name
}
