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

package rbac

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestRoleTables(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600)))
	tests := []struct {
		resource string
		obj      runtime.Object
		want     []any
	}{
		{resource: "roles", obj: role(), want: []any{"pod-reader", "0001-01-01T00:00:00Z"}},
		{
			resource: "clusterroles",
			obj: func() runtime.Object {
				r := clusterRole()
				r.CreationTimestamp = created
				return r
			}(),
			want: []any{"system:pod-reader", "2026-03-04T04:06:07Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Created At"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if got := table.ColumnDefinitions[1].Type; got != "date" {
				t.Errorf("Created At type: got %q, want date", got)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingTables(t *testing.T) {
	more := []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "bob", APIGroup: rbacv1.GroupName},
		{Kind: rbacv1.ServiceAccountKind, Name: "builder", Namespace: "ci"},
	}
	tests := []struct {
		name     string
		resource string
		obj      runtime.Object
		want     []any
	}{
		{
			name:     "rolebinding",
			resource: "rolebindings",
			obj:      roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects = append(b.Subjects, more...) }),
			want:     []any{"read-pods", "Role/pod-reader", "<unknown>", "jane, bob", "system:authenticated", "kube-system/default, ci/builder"},
		},
		{
			name:     "clusterrolebinding without subjects",
			resource: "clusterrolebindings",
			obj:      clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Subjects = nil }),
			want:     []any{"read-pods", "ClusterRole/system:pod-reader", "<unknown>", "", "", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			for _, c := range table.ColumnDefinitions[3:] {
				if c.Priority != 1 {
					t.Errorf("column %s priority: got %d, want 1", c.Name, c.Priority)
				}
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
