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

package apps

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestReplicaSetFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "replicasets")
	rs := registrytest.Modified(validReplicaSet(), func(rs *appsv1.ReplicaSet) { rs.Status.Replicas = 2 })
	registrytest.CheckFields(t, store, rs, fields.Set{"metadata.name": "web", "metadata.namespace": "default", "status.replicas": "2"})
	// The other workloads are selected by their metadata only.
	deploy := registrytest.REST(t, NewStorage, "deployments")
	registrytest.CheckFields(t, deploy, validDeployment(), fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

func TestTables(t *testing.T) {
	tests := []struct {
		resource    string
		obj         runtime.Object
		wantColumns []string
		wantCells   []any
	}{
		{
			resource: "deployments",
			obj: registrytest.Modified(validDeployment(), func(d *appsv1.Deployment) {
				d.Status = appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2}
			}),
			wantColumns: []string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", "2/3", int64(1), int64(2), "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web"},
		},
		{
			resource: "statefulsets",
			obj: registrytest.Modified(validStatefulSet(), func(ss *appsv1.StatefulSet) {
				ss.Status = appsv1.StatefulSetStatus{ReadyReplicas: 1, Replicas: 2}
			}),
			wantColumns: []string{"Name", "Ready", "Age", "Containers", "Images"},
			wantCells:   []any{"web", "1/3", "<unknown>", "app,sidecar", "nginx:1.25,envoy:1"},
		},
		{
			resource: "daemonsets",
			obj: registrytest.Modified(validDaemonSet(), func(ds *appsv1.DaemonSet) {
				ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 5, CurrentNumberScheduled: 4, NumberReady: 3, UpdatedNumberScheduled: 2, NumberAvailable: 1}
			}),
			wantColumns: []string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", int64(5), int64(4), int64(3), int64(2), int64(1), "disk=ssd", "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web"},
		},
		{
			resource:    "daemonsets",
			obj:         validDaemonSet(),
			wantColumns: []string{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", int64(0), int64(0), int64(0), int64(0), int64(0), "<none>", "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web"},
		},
		{
			resource: "replicasets",
			obj: registrytest.Modified(validReplicaSet(), func(rs *appsv1.ReplicaSet) {
				rs.Spec.Selector = &metav1.LabelSelector{
					MatchLabels:      map[string]string{"app": "web"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}},
				}
				rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}
			}),
			wantColumns: []string{"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"},
			wantCells:   []any{"web", int64(3), int64(2), int64(1), "<unknown>", "app,sidecar", "nginx:1.25,envoy:1", "app=web,tier notin (db)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff(tt.wantColumns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			for i, c := range table.ColumnDefinitions {
				wide := c.Name == "Containers" || c.Name == "Images" || c.Name == "Selector"
				if got := c.Priority == 1; got != wide {
					t.Errorf("column %q priority 1 (wide only): got %v, want %v", c.Name, got, wide)
				}
				if c.Description == "" {
					t.Errorf("column %d %q: got no description, want one", i, c.Name)
				}
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.wantCells, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
