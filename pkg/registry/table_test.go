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
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

var testTable = Table{
	Columns: []metav1.TableColumnDefinition{NameColumn, {Name: "Keys", Type: "integer"}},
	Cells: func(obj runtime.Object) []any {
		cm := obj.(*corev1.ConfigMap)
		return []any{cm.Name, int64(len(cm.Data))}
	},
}

func TestTableConvertToTable(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "8"}}
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "token", RemainingItemCount: ptr.To[int64](3)},
		Items:    []corev1.ConfigMap{*a, *b},
	}
	tests := []struct {
		name        string
		obj         runtime.Object
		options     runtime.Object
		wantCells   [][]any
		wantRV      string
		wantCont    string
		wantRemain  *int64
		wantHeaders bool
	}{
		{
			name:        "one object",
			obj:         a,
			wantCells:   [][]any{{"a", int64(1)}},
			wantRV:      "7",
			wantHeaders: true,
		},
		{
			name:        "a list keeps its list metadata",
			obj:         list,
			wantCells:   [][]any{{"a", int64(1)}, {"b", int64(0)}},
			wantRV:      "42",
			wantCont:    "token",
			wantRemain:  ptr.To[int64](3),
			wantHeaders: true,
		},
		{
			name:        "an empty list has no rows",
			obj:         &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}},
			wantCells:   nil,
			wantRV:      "9",
			wantHeaders: true,
		},
		{
			name:        "headers asked for",
			obj:         a,
			options:     &metav1.TableOptions{NoHeaders: false},
			wantCells:   [][]any{{"a", int64(1)}},
			wantRV:      "7",
			wantHeaders: true,
		},
		{
			name:       "noHeaders",
			obj:        list,
			options:    &metav1.TableOptions{NoHeaders: true},
			wantCells:  [][]any{{"a", int64(1)}, {"b", int64(0)}},
			wantRV:     "42",
			wantCont:   "token",
			wantRemain: ptr.To[int64](3),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := testTable.ConvertToTable(context.Background(), tt.obj, tt.options)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			var cells [][]any
			for i, row := range table.Rows {
				cells = append(cells, row.Cells)
				if row.Object.Object == nil {
					t.Errorf("row %d: got no object, want the row's object", i)
				}
			}
			if diff := cmp.Diff(tt.wantCells, cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
			if table.ResourceVersion != tt.wantRV {
				t.Errorf("resourceVersion: got %q, want %q", table.ResourceVersion, tt.wantRV)
			}
			if table.Continue != tt.wantCont {
				t.Errorf("continue: got %q, want %q", table.Continue, tt.wantCont)
			}
			if diff := cmp.Diff(tt.wantRemain, table.RemainingItemCount); diff != "" {
				t.Errorf("remainingItemCount (-want +got):\n%s", diff)
			}
			var wantColumns []metav1.TableColumnDefinition
			if tt.wantHeaders {
				wantColumns = testTable.Columns
			}
			if diff := cmp.Diff(wantColumns, table.ColumnDefinitions); diff != "" {
				t.Errorf("column definitions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTableRowsCarryTheirObject(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	table, err := testTable.ConvertToTable(context.Background(), a, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: got %d, want 1", len(table.Rows))
	}
	if got := table.Rows[0].Object.Object; got != a {
		t.Errorf("row object: got %v, want the converted object itself", got)
	}
}

func TestStandardColumns(t *testing.T) {
	tests := []struct {
		name   string
		column metav1.TableColumnDefinition
		want   metav1.TableColumnDefinition
	}{
		{name: "name", column: NameColumn, want: metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}},
		{name: "age", column: AgeColumn, want: metav1.TableColumnDefinition{Name: "Age", Type: "string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.column
			if got.Description == "" {
				t.Errorf("description: got empty, want ObjectMeta's field doc")
			}
			got.Description = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("column (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		name string
		t    metav1.Time
		want string
	}{
		{name: "zero time", t: metav1.Time{}, want: "<unknown>"},
		// Durations chosen so the printed value does not change in the
		// seconds the test may take.
		{name: "ten minutes", t: metav1.NewTime(time.Now().Add(-10 * time.Minute)), want: "10m"},
		{name: "three days", t: metav1.NewTime(time.Now().Add(-72 * time.Hour)), want: "3d"},
		{name: "a future time within the tolerated skew", t: metav1.NewTime(time.Now().Add(time.Second / 2)), want: "0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Age(tt.t); got != tt.want {
				t.Errorf("Age: got %q, want %q", got, tt.want)
			}
		})
	}
}
