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
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

var q = resource.MustParse

type list = corev1.ResourceList

func limitRange(items ...corev1.LimitRangeItem) *corev1.LimitRange {
	return &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec:       corev1.LimitRangeSpec{Limits: items},
	}
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "limitranges")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: corev1.Resource("limitranges"), Singular: "limitrange", Namespaced: true, ShortNames: []string{"limits"}})
	// As upstream: a PUT of a missing limit range creates it.
	if !store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got false, want true")
	}
}

func TestValidate(t *testing.T) {
	container := func(item corev1.LimitRangeItem) corev1.LimitRangeItem {
		item.Type = corev1.LimitTypeContainer
		return item
	}
	tests := []struct {
		name  string
		items []corev1.LimitRangeItem
		want  []string
	}{
		{name: "empty", want: []string{}},
		{
			name: "valid container, pod and claim limits",
			items: []corev1.LimitRangeItem{
				container(corev1.LimitRangeItem{Max: list{"cpu": q("2")}, Min: list{"cpu": q("100m")}, Default: list{"cpu": q("1")}, DefaultRequest: list{"cpu": q("500m")}, MaxLimitRequestRatio: list{"cpu": q("4")}}),
				{Type: corev1.LimitTypePod, Max: list{"memory": q("2Gi"), "hugepages-2Mi": q("1Gi")}},
				{Type: corev1.LimitTypePersistentVolumeClaim, Min: list{"storage": q("1Gi")}},
				{Type: "example.com/widget", Max: list{"example.com/size": q("3")}},
			},
			want: []string{},
		},
		{
			name:  "unknown type, duplicate type",
			items: []corev1.LimitRangeItem{{Type: "Node"}, container(corev1.LimitRangeItem{}), container(corev1.LimitRangeItem{})},
			want:  []string{"spec.limits[0].type: Invalid value", "spec.limits[2].type: Duplicate value"},
		},
		{
			name:  "container resources only",
			items: []corev1.LimitRangeItem{container(corev1.LimitRangeItem{Max: list{"pods": q("1"), "storage": q("1Gi")}})},
			want:  []string{"spec.limits[0].max[pods]: Invalid value", "spec.limits[0].max[storage]: Invalid value"},
		},
		{
			name:  "pod: no defaults",
			items: []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Default: list{"cpu": q("1")}, DefaultRequest: list{"cpu": q("1")}}},
			want:  []string{"spec.limits[0].default: Forbidden", "spec.limits[0].defaultRequest: Forbidden"},
		},
		{
			name:  "claim without storage bounds",
			items: []corev1.LimitRangeItem{{Type: corev1.LimitTypePersistentVolumeClaim, Max: list{"requests.storage": q("1Gi")}}},
			want:  []string{"spec.limits[0].limits: Required value"},
		},
		{
			name:  "min above max",
			items: []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Min: list{"cpu": q("2")}, Max: list{"cpu": q("1")}}},
			want:  []string{"spec.limits[0].min[cpu]: Invalid value"},
		},
		{
			name:  "default request above default, default above max",
			items: []corev1.LimitRangeItem{container(corev1.LimitRangeItem{Max: list{"cpu": q("1")}, Default: list{"cpu": q("2")}, DefaultRequest: list{"cpu": q("3")}})},
			want:  []string{"spec.limits[0].defaultRequest[cpu]: Invalid value", "spec.limits[0].defaultRequest[cpu]: Invalid value", "spec.limits[0].default[cpu]: Invalid value"},
		},
		{
			name:  "min above default and default request",
			items: []corev1.LimitRangeItem{container(corev1.LimitRangeItem{Min: list{"cpu": q("2")}, Default: list{"cpu": q("1")}, DefaultRequest: list{"cpu": q("1")}})},
			want:  []string{"spec.limits[0].defaultRequest[cpu]: Invalid value", "spec.limits[0].default[cpu]: Invalid value"},
		},
		{
			name:  "ratio below 1 and above max/min",
			items: []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, MaxLimitRequestRatio: list{"cpu": q("500m"), "memory": q("3")}, Min: list{"memory": q("1Gi")}, Max: list{"memory": q("2Gi")}}},
			want:  []string{"spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value", "spec.limits[0].maxLimitRequestRatio[memory]: Invalid value"},
		},
		{
			name:  "extended resource: default request must equal default",
			items: []corev1.LimitRangeItem{container(corev1.LimitRangeItem{Default: list{"example.com/gpu": q("2")}, DefaultRequest: list{"example.com/gpu": q("1")}})},
			want:  []string{"spec.limits[0].defaultRequest[example.com/gpu]: Invalid value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "limitranges")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), limitRange(tt.items...)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), limitRange(tt.items...), limitRange()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	lr := limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Min: list{"cpu": q("2")}, Max: list{"cpu": q("1")}})
	errs := validate(&lr.Spec)
	if len(errs) != 1 {
		t.Fatalf("errors: got %v, want one", errs)
	}
	if got, want := errs[0].Detail, "min value 2 is greater than max value 1"; got != want {
		t.Errorf("detail: got %q, want %q", got, want)
	}
}

func TestPrepareForCreate(t *testing.T) {
	tests := []struct {
		name     string
		lr       *corev1.LimitRange
		wantUUID bool
	}{
		{name: "named: kept", lr: limitRange()},
		{name: "unnamed: a UUID", lr: &corev1.LimitRange{}, wantUUID: true},
	}
	store := registrytest.REST(t, NewStorage, "limitranges")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.lr.Name
			store.CreateStrategy.PrepareForCreate(context.Background(), tt.lr)
			switch {
			case tt.wantUUID && len(tt.lr.Name) != 36:
				t.Errorf("name: got %q, want a UUID", tt.lr.Name)
			case !tt.wantUUID && tt.lr.Name != before:
				t.Errorf("name: got %q, want %q", tt.lr.Name, before)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "limitranges")
	registrytest.CheckFields(t, store, limitRange(), fields.Set{"metadata.name": "limits", "metadata.namespace": "default"})
}

// TestTable: upstream prints limit ranges with the default table (name, creation time).
func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "limitranges")
	lr := limitRange()
	lr.CreationTimestamp = metav1.Unix(1700000000, 0)
	table, err := store.ConvertToTable(context.Background(), lr, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if diff := cmp.Diff([]string{"Name", "Created At"}, registrytest.ColumnNames(table)); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"limits", "2023-11-14T22:13:20Z"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
