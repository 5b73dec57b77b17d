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

package limitrange

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

var limitRanges = corev1.Resource("limitranges")

// NewStorage returns the storage of limitranges.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.CreateOnUpdate = true
	// As upstream: a limit range created without a name gets a UUID.
	s.OnCreate = func(obj runtime.Object) {
		if lr := obj.(*corev1.LimitRange); lr.Name == "" {
			lr.Name = string(uuid.NewUUID())
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(&obj.(*corev1.LimitRange).Spec) }
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   limitRanges,
		Singular:   "limitrange",
		ShortNames: []string{"limits"},
		New:        func() runtime.Object { return &corev1.LimitRange{} },
		NewList:    func() runtime.Object { return &corev1.LimitRangeList{} },
		Strategy:   s,
	})
	if err != nil {
		return nil, err
	}
	// Upstream's printers have no limit range table: Name and Created At.
	store.TableConvertor = rest.NewDefaultTableConvertor(limitRanges)
	return map[string]rest.Storage{"limitranges": store}, nil
}

var standardTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

// validate is upstream's ValidateLimitRange (after SetDefaults_LimitRangeItem,
// which the scheme applies): known types, once each; resource names by
// type; and min ≤ default request ≤ default ≤ max, ratios at least 1 and
// within max/min.
func validate(spec *corev1.LimitRangeSpec) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.LimitType]()
	for i := range spec.Limits {
		p := field.NewPath("spec", "limits").Index(i)
		limit := &spec.Limits[i]
		errs = append(errs, validateType(limit.Type, p.Child("type"))...)
		if seen.Has(limit.Type) {
			errs = append(errs, field.Duplicate(p.Child("type"), limit.Type))
		}
		seen.Insert(limit.Type)
		errs = append(errs, validateItem(limit, p)...)
	}
	return errs
}

func validateType(t corev1.LimitType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(p, t, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(t), "/") && !standardTypes.Has(t) {
		errs = append(errs, field.Invalid(p, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

func validateItem(limit *corev1.LimitRangeItem, p *field.Path) field.ErrorList {
	nameFn := resourcequota.ValidateResourceName
	if limit.Type == corev1.LimitTypePod || limit.Type == corev1.LimitTypeContainer {
		nameFn = resourcequota.ValidateContainerResourceName
	}
	var errs field.ErrorList
	checkNames := func(list corev1.ResourceList, child string) {
		for _, name := range slices.Sorted(maps.Keys(list)) {
			errs = append(errs, nameFn(name, p.Child(child).Key(string(name)))...)
		}
	}
	checkNames(limit.Max, "max")
	checkNames(limit.Min, "min")
	if limit.Type == corev1.LimitTypePod {
		if len(limit.Default) > 0 {
			errs = append(errs, field.Forbidden(p.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(limit.DefaultRequest) > 0 {
			errs = append(errs, field.Forbidden(p.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		checkNames(limit.Default, "default")
		checkNames(limit.DefaultRequest, "defaultRequest")
	}
	if limit.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := limit.Min[corev1.ResourceStorage]
		_, hasMax := limit.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			errs = append(errs, field.Required(p.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	checkNames(limit.MaxLimitRequestRatio, "maxLimitRequestRatio")

	names := sets.New[corev1.ResourceName]()
	for _, list := range []corev1.ResourceList{limit.Max, limit.Min, limit.MaxLimitRequestRatio} {
		names.Insert(slices.Collect(maps.Keys(list))...)
	}
	if limit.Type != corev1.LimitTypePod {
		names.Insert(slices.Collect(maps.Keys(limit.Default))...)
		names.Insert(slices.Collect(maps.Keys(limit.DefaultRequest))...)
	}
	for _, name := range sets.List(names) {
		errs = append(errs, compareQuantities(limit, name, p)...)
	}
	return errs
}

// compareQuantities orders the values of one resource as upstream does.
func compareQuantities(limit *corev1.LimitRangeItem, name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	k := string(name)
	minQ, hasMin := limit.Min[name]
	maxQ, hasMax := limit.Max[name]
	var def, defReq resource.Quantity
	var hasDef, hasDefReq bool
	if limit.Type != corev1.LimitTypePod {
		def, hasDef = limit.Default[name]
		defReq, hasDefReq = limit.DefaultRequest[name]
	}
	ratio, hasRatio := limit.MaxLimitRequestRatio[name]

	if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("min").Key(k), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
	}
	if hasDefReq && hasMin && minQ.Cmp(defReq) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(k), defReq, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), defReq.String())))
	}
	if hasDefReq && hasMax && defReq.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(k), defReq, fmt.Sprintf("default request value %s is greater than max value %s", defReq.String(), maxQ.String())))
	}
	if hasDefReq && hasDef && defReq.Cmp(def) > 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(k), defReq, fmt.Sprintf("default request value %s is greater than default limit value %s", defReq.String(), def.String())))
	}
	if hasDef && hasMin && minQ.Cmp(def) > 0 {
		errs = append(errs, field.Invalid(p.Child("default").Key(k), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), def.String())))
	}
	if hasDef && hasMax && def.Cmp(maxQ) > 0 {
		errs = append(errs, field.Invalid(p.Child("default").Key(k), maxQ, fmt.Sprintf("default value %s is greater than max value %s", def.String(), maxQ.String())))
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		errs = append(errs, field.Invalid(p.Child("maxLimitRequestRatio").Key(k), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax {
		ratioValue, minValue, maxValue := float64(ratio.Value()), minQ.Value(), maxQ.Value()
		if ratio.Value() < resource.MaxMilliValue && minValue < resource.MaxMilliValue && maxValue < resource.MaxMilliValue {
			ratioValue, minValue, maxValue = float64(ratio.MilliValue())/1000, minQ.MilliValue(), maxQ.MilliValue()
		}
		if limitRatio := float64(maxValue) / float64(minValue); ratioValue > limitRatio {
			errs = append(errs, field.Invalid(p.Child("maxLimitRequestRatio").Key(k), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limitRatio)))
		}
	}
	// Resources that cannot be overcommitted (huge pages, extended
	// resources) take a default request equal to the default limit.
	if !resourcequota.IsOvercommitAllowed(name) && hasDef && hasDefReq && def.Cmp(defReq) != 0 {
		errs = append(errs, field.Invalid(p.Child("defaultRequest").Key(k), defReq, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), defReq.String(), k)))
	}
	return errs
}
