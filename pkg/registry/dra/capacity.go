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

package dra

import (
	"fmt"
	"math"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A device's capacity: a request policy only for a device allocated more
// than once, and then one of valid values (sorted, at most the capacity,
// the default among them) or a range (the default in it, in steps from
// its minimum), in whole units: upstream's DRAFractionalCapacityRange
// needs a compatibility version of 1.37, and kube-apiserver 1.37's is
// 1.36 unless set.

func validateSingleAllocatableCapacity(c resourcev1.DeviceCapacity, path *field.Path) field.ErrorList {
	if c.RequestPolicy != nil {
		return field.ErrorList{field.Forbidden(path.Child("requestPolicy"), "allowMultipleAllocations must be true")}
	}
	return nil
}

func validateMultiAllocatableCapacity(c resourcev1.DeviceCapacity, path *field.Path) field.ErrorList {
	p := c.RequestPolicy
	if p == nil {
		return nil
	}
	path = path.Child("requestPolicy")
	switch {
	case len(p.ValidValues) > 0 && p.ValidRange != nil:
		return field.ErrorList{field.Forbidden(path, `exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time`)}
	case len(p.ValidValues) > 0:
		if p.Default == nil {
			return field.ErrorList{field.Required(path.Child("default"), "required when validValues is defined")}
		}
		return validateValidValues(*p.Default, c.Value, p.ValidValues, path.Child("validValues"))
	case p.ValidRange != nil:
		if p.Default == nil {
			return field.ErrorList{field.Required(path.Child("default"), "required when validRange is defined")}
		}
		return validateRange(*p.Default, c.Value, *p.ValidRange, path.Child("validRange"))
	}
	return nil
}

func validateValidValues(def, capacity resource.Quantity, values []resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range len(values) - 1 {
		if values[i].Cmp(values[i+1]) > 0 {
			errs = append(errs, field.Invalid(path.Index(i+1), values[i+1].String(), "values must be sorted in ascending order"))
		}
	}
	foundDefault := false
	errs = append(errs, validateSet(values, validValuesMaxSize, func(v resource.Quantity, path *field.Path) field.ErrorList {
		if v.Cmp(def) == 0 {
			foundDefault = true
		}
		if v.Cmp(capacity) > 0 {
			return field.ErrorList{field.Invalid(path, v.String(), fmt.Sprintf("option is larger than capacity value: %s", capacity.String()))}
		}
		return nil
	}, func(v resource.Quantity) int64 { return v.Value() }, path, coverage{})...)
	if !foundDefault {
		errs = append(errs, field.Invalid(path, def.String(), "default value is not valid according to the requestPolicy"))
	}
	return errs
}

// validValuesMaxSize is upstream's CapacityRequestPolicyDiscreteMaxOptions.
const validValuesMaxSize = 10

// boundedQuantity is a range's quantity by name.
type boundedQuantity struct {
	q    *resource.Quantity
	name string
}

func validateRange(def, capacity resource.Quantity, r resourcev1.CapacityRequestPolicyRange, path *field.Path) field.ErrorList {
	if r.Min == nil {
		return field.ErrorList{field.Required(path.Child("min"), "required when validRange is defined")}
	}
	var errs field.ErrorList
	if r.Min.Cmp(capacity) > 0 {
		errs = append(errs, field.Invalid(path.Child("min"), r.Min.String(), fmt.Sprintf("min is larger than capacity value: %s", capacity.String())))
	}
	if def.Cmp(*r.Min) < 0 {
		errs = append(errs, field.Invalid(path.Child("default"), def.String(), fmt.Sprintf("default is less than min: %s", r.Min.String())))
	}
	if r.Max != nil {
		if r.Min.Cmp(*r.Max) > 0 {
			errs = append(errs, field.Invalid(path.Child("max"), r.Min.String(), fmt.Sprintf("min is larger than max: %s", r.Max.String())))
		}
		if r.Max.Cmp(capacity) > 0 {
			errs = append(errs, field.Invalid(path.Child("max"), r.Max.String(), fmt.Sprintf("max is larger than capacity value: %s", capacity.String())))
		}
		if def.Cmp(*r.Max) > 0 {
			errs = append(errs, field.Invalid(path.Child("default"), def.String(), fmt.Sprintf("default is more than max: %s", r.Max.String())))
		}
	}
	if r.Step == nil {
		return errs
	}
	if r.Step.Sign() <= 0 {
		return append(errs, field.Invalid(path.Child("step"), r.Step.String(), "must be greater than zero"))
	}
	added := r.Min.DeepCopy()
	added.Add(*r.Step)
	if added.Cmp(capacity) > 0 {
		errs = append(errs, field.Invalid(path.Child("step"), r.Step.String(), fmt.Sprintf("one step %s is larger than capacity value: %s", added.String(), capacity.String())))
	}
	unsafe := false
	for _, b := range []boundedQuantity{{&def, "default"}, {r.Min, "min"}, {r.Max, "max"}, {r.Step, "step"}} {
		switch {
		case b.q == nil:
		case b.q.Sign() < 0:
			errs, unsafe = append(errs, field.Invalid(path.Child(b.name), b.q.String(), apimachineryvalidation.IsNegativeErrorMsg)), true
		case b.q.CmpInt64(math.MaxInt64) > 0:
			errs, unsafe = append(errs, field.Invalid(path.Child(b.name), b.q.String(), "must not be larger than 9223372036854775807")), true
		}
	}
	if unsafe {
		return errs
	}
	errs = append(errs, validateRangeStep(def, *r.Min, *r.Step, path.Child("step"))...)
	if r.Max != nil {
		errs = append(errs, validateRangeStep(*r.Max, *r.Min, *r.Step, path.Child("step"))...)
	}
	return errs
}

// validateRangeStep: value is min plus a multiple of step, in whole
// units.
func validateRangeStep(value, min, step resource.Quantity, path *field.Path) field.ErrorList {
	if (value.Value()-min.Value())%step.Value() != 0 {
		return field.ErrorList{field.Invalid(path, value.String(), fmt.Sprintf("value is not a multiple of a given step (%s) from (%s)", step.String(), min.String()))}
	}
	return nil
}
