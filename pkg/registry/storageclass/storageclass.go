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
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of storageclasses.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*storagev1.StorageClass)) }
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		sc := obj.(*storagev1.StorageClass)
		return append(validate(sc), validateUpdate(sc, old.(*storagev1.StorageClass))...)
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

// Upstream's bounds on parameters.
const (
	maxParameters     = 512
	maxParametersSize = 256 * (1 << 10)
)

var (
	supportedReclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}
	supportedBindingModes    = []string{string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}
)

// validate is upstream's ValidateStorageClass (after the scheme's defaults).
func validate(sc *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(p, sc.Provisioner))
	} else {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(sc.Provisioner)) {
			errs = append(errs, field.Invalid(p, strings.ToLower(sc.Provisioner), msg))
		}
	}
	errs = append(errs, validateParameters(sc.Parameters)...)
	if r := sc.ReclaimPolicy; r != nil && *r != "" && !slices.Contains(supportedReclaimPolicies, string(*r)) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), *r, supportedReclaimPolicies))
	}
	switch m := sc.VolumeBindingMode; {
	case m == nil:
		errs = append(errs, field.Required(field.NewPath("volumeBindingMode"), ""))
	case !slices.Contains(supportedBindingModes, string(*m)):
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), *m, supportedBindingModes))
	}
	return append(errs, validateAllowedTopologies(sc.AllowedTopologies)...)
}

func validateParameters(params map[string]string) field.ErrorList {
	p := field.NewPath("parameters")
	if len(params) > maxParameters {
		return field.ErrorList{field.TooLong(p, "", maxParameters)}
	}
	var errs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParametersSize {
		errs = append(errs, field.TooLong(p, "", maxParametersSize))
	}
	return errs
}

// validateAllowedTopologies is upstream's validateAllowedTopologies: each
// term's expressions have a label key, at least one value, no duplicate
// value or key, and no two terms are the same.
func validateAllowedTopologies(terms []corev1.TopologySelectorTerm) field.ErrorList {
	var errs field.ErrorList
	var seen []map[string]sets.Set[string]
	for i, term := range terms {
		tp := field.NewPath("allowedTopologies").Index(i)
		exprs := map[string]sets.Set[string]{}
		for j, req := range term.MatchLabelExpressions {
			ep := tp.Child("matchLabelExpressions").Index(j)
			values := sets.New[string]()
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(ep.Child("values"), ""))
			}
			for k, v := range req.Values {
				if values.Has(v) {
					errs = append(errs, field.Duplicate(ep.Child("values").Index(k), v))
				}
				values.Insert(v)
			}
			errs = append(errs, metav1validation.ValidateLabelName(req.Key, ep.Child("key"))...)
			if _, ok := exprs[req.Key]; ok {
				errs = append(errs, field.Duplicate(ep.Child("key"), req.Key))
			}
			exprs[req.Key] = values
		}
		for _, other := range seen {
			if reflect.DeepEqual(exprs, other) {
				errs = append(errs, field.Duplicate(tp.Child("matchLabelExpressions"), ""))
			}
		}
		seen = append(seen, exprs)
	}
	return errs
}

// validateUpdate is upstream's ValidateStorageClassUpdate: provisioner,
// parameters, reclaimPolicy and volumeBindingMode are immutable. Its
// errors carry no value (null), as 1.37's declarative validation, which
// answers for these fields, reports them.
func validateUpdate(sc, old *storagev1.StorageClass) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name     string
		now, was any
	}{
		{"parameters", sc.Parameters, old.Parameters},
		{"provisioner", sc.Provisioner, old.Provisioner},
		{"reclaimPolicy", sc.ReclaimPolicy, old.ReclaimPolicy},
		{"volumeBindingMode", sc.VolumeBindingMode, old.VolumeBindingMode},
	} {
		if !apiequality.Semantic.DeepEqual(f.now, f.was) {
			errs = append(errs, field.Invalid(field.NewPath(f.name), nil, apimachineryvalidation.FieldImmutableErrorMsg))
		}
	}
	return errs
}
