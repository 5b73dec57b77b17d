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

package watchcache

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Encoding a cached object must not write into it: many requests encode
// it at once (watch events, initial events, kept LIST encodings, Table
// conversion). A resource.Quantity does write: its String, which the
// protobuf and JSON encoders call, caches the canonical form in the
// Quantity on first use (kubernetes#82497; upstream's cacher deep-copies
// per watcher instead). normalize makes every Quantity an object holds
// fill that cache once, before the object is published to readers, so
// later encodings only read it.

var quantityType = reflect.TypeFor[resource.Quantity]()

// normalize fills the cached string form of every Quantity reachable
// through pointers, struct fields and slice elements of obj. Map values
// need none: they are encoded from copies.
func normalize(obj any) {
	v := reflect.ValueOf(obj)
	if !mayHoldQuantity(v.Type()) {
		return
	}
	walkQuantities(v)
}

func walkQuantities(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkQuantities(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == quantityType {
			if v.CanAddr() {
				_ = v.Addr().Interface().(*resource.Quantity).String()
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && mayHoldQuantity(v.Type().Field(i).Type) {
				walkQuantities(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if !mayHoldQuantity(v.Type().Elem()) {
			return
		}
		for i := range v.Len() {
			walkQuantities(v.Index(i))
		}
	}
}

// holdsQuantity caches, per type, whether a value of it can reach an
// addressable Quantity (map values are not addressable).
var holdsQuantity sync.Map // reflect.Type -> bool

func mayHoldQuantity(t reflect.Type) bool {
	if b, ok := holdsQuantity.Load(t); ok {
		return b.(bool)
	}
	b := computeHoldsQuantity(t, map[reflect.Type]bool{})
	holdsQuantity.Store(t, b)
	return b
}

// computeHoldsQuantity answers mayHoldQuantity for t; visiting holds the
// types being answered further up, so recursive types end.
func computeHoldsQuantity(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if b, ok := holdsQuantity.Load(t); ok {
		return b.(bool)
	}
	if visiting[t] {
		return false // answered where the recursion started
	}
	visiting[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return computeHoldsQuantity(t.Elem(), visiting)
	case reflect.Interface:
		return true // unknown until run time
	case reflect.Struct:
		if t == quantityType {
			return true
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && computeHoldsQuantity(f.Type, visiting) {
				return true
			}
		}
	}
	return false
}
