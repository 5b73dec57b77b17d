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

package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
)

// Diff is the diff kube-apiserver's validation messages show of two values
// of a type (k8s.io/apimachinery's diff.Diff of its internal types): a
// unified diff of their JSON with Go's field names, in declaration order,
// for the internal types have no JSON tags. The v1 types here have the
// internal ones' field names where these messages show them.
func Diff(a, b any) string {
	return diff.Diff(untagged(reflect.ValueOf(a)), untagged(reflect.ValueOf(b)))
}

// Internal is v as kube-apiserver's validation messages print a value of
// its internal type (a field.Invalid's value): as JSON with Go's field
// names.
func Internal(v any) any { return untagged(reflect.ValueOf(v)) }

// goFields is a struct as encoding/json writes one without tags: its
// fields by Go name, in order.
type goFields []goField

type goField struct {
	name  string // "" for the fields of an embedded struct, value holding them
	value any
}

// MarshalJSON implements json.Marshaler.
func (f goFields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, field := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		if field.name == "" { // an embedded struct's fields, written as they are
			b.Write(field.value.(json.RawMessage))
			continue
		}
		value, err := json.Marshal(field.value)
		if err != nil {
			return nil, err
		}
		name, _ := json.Marshal(field.name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// untagged returns v as encoding/json would see it if its structs had no
// tags; values that marshal themselves (quantities, times) are kept.
func untagged(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type().Implements(marshaler) && (v.Kind() != reflect.Pointer || !v.IsNil()) || tagged(v.Type()) {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return untagged(v.Elem())
	case reflect.Struct:
		var f goFields
		addFields(v, &f)
		return f
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = untagged(it.Value())
		}
		return m
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Bytes()
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = untagged(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

// tagged reports whether t is one of the metav1 types (ObjectMeta,
// LabelSelector, ...), which the internal types share with v1, JSON tags
// and all.
func tagged(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == metav1Path
}

var (
	metav1Path = reflect.TypeFor[metav1.ObjectMeta]().PkgPath()
	typeMeta   = reflect.TypeFor[metav1.TypeMeta]()
)

// addFields adds v's exported fields to f, an embedded struct's in its place.
func addFields(v reflect.Value, f *goFields) {
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		switch {
		case sf.Anonymous && fv.Type() == typeMeta:
			// Conversions leave an internal object's TypeMeta empty.
		case sf.Anonymous && tagged(fv.Type()):
			// encoding/json inlines its fields, by their tags.
			raw, _ := json.Marshal(fv.Interface())
			if inner := bytes.TrimSuffix(bytes.TrimPrefix(raw, []byte("{")), []byte("}")); len(inner) > 0 {
				*f = append(*f, goField{value: json.RawMessage(inner)})
			}
		case sf.Anonymous && fv.Kind() == reflect.Struct:
			addFields(fv, f)
		case sf.Anonymous && fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct:
			if !fv.IsNil() {
				addFields(fv.Elem(), f)
			}
		case sf.IsExported():
			*f = append(*f, goField{sf.Name, untagged(fv)})
		}
	}
}
