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

package persistentvolumeclaim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestTable: kubectl's columns of claims, as upstream's printer makes them.
func TestTable(t *testing.T) {
	now := metav1.Now()
	tests := []registrytest.Row{
		{
			Name: "pending: no capacity or access modes yet",
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = ptr.To("standard") }),
			Want: []any{"data", "Pending", "", "", "", "standard", "<unset>", "<unknown>", "Filesystem"},
		},
		{
			Name: "bound: the volume's capacity and access modes",
			Obj: registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.StorageClassName = ptr.To("standard")
				pvc.Spec.VolumeAttributesClassName = ptr.To("gold")
			}),
			Want: []any{"data", "Bound", "pv-1", "2Gi", "RWO,ROX", "standard", "gold", "<unknown>", "Filesystem"},
		},
		{
			Name: "deleted, class from the beta annotation, no volume mode",
			Obj: registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.DeletionTimestamp = &now
				pvc.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "legacy"}
				pvc.Spec.StorageClassName = ptr.To("standard")
				pvc.Spec.VolumeMode = nil
			}),
			Want: []any{"data", "Terminating", "pv-1", "2Gi", "RWO,ROX", "legacy", "<unset>", "<unknown>", "<unset>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "persistentvolumeclaims")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.Obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			wantColumns := []string{"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"}
			if diff := cmp.Diff(wantColumns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.Want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
