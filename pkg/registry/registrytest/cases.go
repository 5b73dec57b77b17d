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

package registrytest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Modified returns a deep copy of obj, changed by mutate.
func Modified[T runtime.Object](obj T, mutate func(T)) T {
	out := obj.DeepCopyObject().(T)
	mutate(out)
	return out
}

// Mutation is a table test's row: a valid object changed by Mutate, and
// the errors wanted of it.
type Mutation[T any] struct {
	Name   string
	Mutate func(T)
	Want   []string
}

// Change is a table test's row: an object Obj (an update of Old, where
// the check is an update's), and the errors wanted of it.
type Change[T any] struct {
	Name     string
	Old, Obj T
	Want     []string
}

// RunMutations runs each case as a subtest: got of base() changed by its
// Mutate must be its Want; what names the check in a failure.
func RunMutations[T runtime.Object](t *testing.T, what string, base func() T, cases []Mutation[T], got func(obj T) []string) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			if diff := cmp.Diff(tt.Want, got(Modified(base(), tt.Mutate))); diff != "" {
				t.Errorf("%s (-want +got):\n%s", what, diff)
			}
		})
	}
}

// RunChanges runs each case as a subtest: got of its Obj and Old must be
// its Want; what names the check in a failure.
func RunChanges[T any](t *testing.T, what string, cases []Change[T], got func(obj, old T) []string) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			if diff := cmp.Diff(tt.Want, got(tt.Obj, tt.Old)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", what, diff)
			}
		})
	}
}

// ValidateMutations checks strategy's Validate of each case's object,
// base() changed by Mutate, its errors as show words them.
func ValidateMutations[T runtime.Object](t *testing.T, strategy rest.RESTCreateStrategy, show func(field.ErrorList) []string, base func() T, cases []Mutation[T]) {
	t.Helper()
	RunMutations(t, "Validate errors", base, cases, func(obj T) []string {
		return show(strategy.Validate(context.Background(), obj))
	})
}

// ValidateUpdateMutations checks strategy's ValidateUpdate of each case's
// object, base() changed by Mutate, over base(), its errors as show words
// them.
func ValidateUpdateMutations[T runtime.Object](t *testing.T, strategy rest.RESTUpdateStrategy, show func(field.ErrorList) []string, base func() T, cases []Mutation[T]) {
	t.Helper()
	RunMutations(t, "ValidateUpdate errors", base, cases, func(obj T) []string {
		return show(strategy.ValidateUpdate(context.Background(), obj, base()))
	})
}

// ValidateChanges checks strategy's Validate of each case's Obj, its
// errors as show words them.
func ValidateChanges[T runtime.Object](t *testing.T, strategy rest.RESTCreateStrategy, show func(field.ErrorList) []string, cases []Change[T]) {
	t.Helper()
	RunChanges(t, "Validate errors", cases, func(obj, _ T) []string {
		return show(strategy.Validate(context.Background(), obj))
	})
}

// ValidateUpdateChanges checks strategy's ValidateUpdate of each case's
// Obj over its Old, its errors as show words them.
func ValidateUpdateChanges[T runtime.Object](t *testing.T, strategy rest.RESTUpdateStrategy, show func(field.ErrorList) []string, cases []Change[T]) {
	t.Helper()
	RunChanges(t, "ValidateUpdate errors", cases, func(obj, old T) []string {
		return show(strategy.ValidateUpdate(context.Background(), obj, old))
	})
}

// ValidateCreateAndUpdate checks, for each case, store's Validate of its
// Obj and then its ValidateUpdate of Obj over old(): both must give its Want
// (a resource whose update rules are its create rules).
func ValidateCreateAndUpdate[T runtime.Object](t *testing.T, store *registry.REST, show func(field.ErrorList) []string, old func() T, cases []Change[T]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			checkCreateAndUpdate(t, store, show, tt.Obj, old(), tt.Want)
		})
	}
}

// ValidateMutationsCreateAndUpdate checks, for each case, store's Validate
// of base() changed by its Mutate and then its ValidateUpdate of that over
// base(): both must give its Want.
func ValidateMutationsCreateAndUpdate[T runtime.Object](t *testing.T, store *registry.REST, show func(field.ErrorList) []string, base func() T, cases []Mutation[T]) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			checkCreateAndUpdate(t, store, show, Modified(base(), tt.Mutate), base(), tt.Want)
		})
	}
}

func checkCreateAndUpdate(t *testing.T, store *registry.REST, show func(field.ErrorList) []string, obj, old runtime.Object, want []string) {
	t.Helper()
	if diff := cmp.Diff(want, show(store.CreateStrategy.Validate(context.Background(), obj))); diff != "" {
		t.Errorf("Validate errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, show(store.UpdateStrategy.ValidateUpdate(context.Background(), obj, old))); diff != "" {
		t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
	}
}

// Row is a table test's row: an object and the cells of its row in the
// resource's Table.
type Row struct {
	Name string
	Obj  runtime.Object
	Want []any
}

// TableOf returns convertor's Table of obj, failing t on an error or unless
// it has one row.
func TableOf(t testing.TB, convertor rest.TableConvertor, obj runtime.Object) *metav1.Table {
	t.Helper()
	table, err := convertor.ConvertToTable(context.Background(), obj, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: got %d, want 1", len(table.Rows))
	}
	return table
}

// CheckTable runs each row as a subtest: convertor's Table of its Obj must
// have the columns named columns and its cells.
func CheckTable(t *testing.T, convertor rest.TableConvertor, columns []string, rows ...Row) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.Name, func(t *testing.T) {
			table := TableOf(t, convertor, tt.Obj)
			if diff := cmp.Diff(columns, ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.Want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// Generation is a table test's row: a change to an object, and the
// generation PrepareForUpdate leaves on it.
type Generation[T any] struct {
	Name   string
	Mutate func(T)
	Want   int64
}

// CheckGenerations runs each case as a subtest: strategy's PrepareForUpdate
// of old changed by Mutate, over old, must leave the generation Want; then
// also, where not nil, checks the prepared object further.
func CheckGenerations[T interface {
	runtime.Object
	GetGeneration() int64
}](t *testing.T, strategy rest.RESTUpdateStrategy, old T, cases []Generation[T], also func(t *testing.T, obj T)) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			obj := Modified(old, tt.Mutate)
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if got := obj.GetGeneration(); got != tt.Want {
				t.Errorf("generation: got %d, want %d", got, tt.Want)
			}
			if also != nil {
				also(t, obj)
			}
		})
	}
}

// WarningCase is a table test's row: the warnings wanted of a create of
// Obj (when Old is nil) or of an update of Old to Obj.
type WarningCase struct {
	Name     string
	Obj, Old runtime.Object
	Want     []string
}

// CheckWarnings checks store's warnings of each case as the store asks
// for them: an update's after its PrepareForUpdate.
func CheckWarnings(t *testing.T, store *registry.REST, cases []WarningCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			var got []string
			if tt.Old == nil {
				got = store.CreateStrategy.WarningsOnCreate(context.Background(), tt.Obj)
			} else {
				got = UpdateWarnings(store.UpdateStrategy, tt.Obj, tt.Old)
			}
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
