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

package persistentvolume

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validPV returns a defaulted hostPath volume that passes validation.
func validPV() *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv-1"}},
		},
	}
	api.Scheme.Default(pv)
	return pv
}

func pinNow(t *testing.T) metav1.Time {
	t.Helper()
	pinned := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	saved := now
	now = func() metav1.Time { return pinned }
	t.Cleanup(func() { now = saved })
	return pinned
}

// pvs are the stores of persistentvolumes and their status on one registrytest.MemStorage.
type pvs struct {
	mem    *registrytest.MemStorage
	store  *registry.REST
	status *registry.StatusREST
}

func newPVs(t *testing.T) pvs {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("persistentvolumes"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	store, ok := storages["persistentvolumes"].(*registry.REST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.REST", "persistentvolumes", storages["persistentvolumes"])
	}
	status, ok := storages["persistentvolumes/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "persistentvolumes/status", storages["persistentvolumes/status"])
	}
	return pvs{mem: mem, store: store, status: status}
}

func (p pvs) seed(t *testing.T, pv *corev1.PersistentVolume) *corev1.PersistentVolume {
	t.Helper()
	key, err := p.store.KeyFunc(genericapirequest.NewContext(), pv.Name)
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return p.mem.Seed(t, key, pv).(*corev1.PersistentVolume)
}

func TestStorage(t *testing.T) {
	p := newPVs(t)
	if p.store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got true, want false")
	}
	if diff := cmp.Diff([]string{"pv"}, p.store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if got, want := p.store.DefaultQualifiedResource, corev1.Resource("persistentvolumes"); got != want {
		t.Errorf("resource: got %v, want %v", got, want)
	}
	if p.store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths("v1", "status"), p.store.GetResetFields(), equal); diff != "" {
		t.Errorf("persistentvolumes reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths("v1", "spec"), p.status.GetResetFields(), equal); diff != "" {
		t.Errorf("persistentvolumes/status reset fields (-want +got):\n%s", diff)
	}
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "persistentvolumes", "persistentvolumes", "persistentvolumes/status")
}

func TestPrepareForCreate(t *testing.T) {
	pinned := pinNow(t)
	pv := registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, Message: "hi", Reason: "Because"}
	})
	registrytest.REST(t, NewStorage, "persistentvolumes").CreateStrategy.PrepareForCreate(context.Background(), pv)
	want := corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &pinned}
	if diff := cmp.Diff(want, pv.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != "/data/pv-1" {
		t.Errorf("spec.hostPath after PrepareForCreate: got %+v, want path /data/pv-1", pv.Spec.HostPath)
	}
}

func TestPrepareForUpdateKeepsStatus(t *testing.T) {
	old := registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable}
	})
	obj := registrytest.Modified(old, func(pv *corev1.PersistentVolume) {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased}
	})
	registrytest.REST(t, NewStorage, "persistentvolumes").UpdateStrategy.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
	}
	if got, want := obj.Spec.PersistentVolumeReclaimPolicy, corev1.PersistentVolumeReclaimDelete; got != want {
		t.Errorf("reclaim policy after PrepareForUpdate: got %q, want %q", got, want)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// persistentvolumes and of persistentvolumes/status.
func TestUpdateThroughStores(t *testing.T) {
	pinned := pinNow(t)
	earlier := metav1.NewTime(pinned.Add(-time.Hour))
	stored := registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &earlier}
	})
	tests := []struct {
		name       string
		status     bool
		phase      corev1.PersistentVolumePhase
		wantPolicy corev1.PersistentVolumeReclaimPolicy
		wantStatus corev1.PersistentVolumeStatus
	}{
		{
			name: "persistentvolumes: spec changes, status kept", phase: corev1.VolumeAvailable,
			wantPolicy: corev1.PersistentVolumeReclaimDelete, wantStatus: stored.Status,
		},
		{
			name: "persistentvolumes/status: new phase stamped, spec kept", status: true, phase: corev1.VolumeAvailable,
			wantPolicy: corev1.PersistentVolumeReclaimRetain,
			wantStatus: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable, LastPhaseTransitionTime: &pinned},
		},
		{
			name: "persistentvolumes/status: same phase keeps its transition time", status: true, phase: corev1.VolumePending,
			wantPolicy: corev1.PersistentVolumeReclaimRetain,
			wantStatus: corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &earlier},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPVs(t)
			current := p.seed(t, stored)
			update := registrytest.Modified(current, func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
				pv.Status = corev1.PersistentVolumeStatus{Phase: tt.phase}
			})
			var updater rest.Updater = p.store
			if tt.status {
				updater = p.status
			}
			out, _, err := updater.Update(genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone), "pv-1", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*corev1.PersistentVolume)
			if got.Spec.PersistentVolumeReclaimPolicy != tt.wantPolicy {
				t.Errorf("reclaim policy: got %q, want %q", got.Spec.PersistentVolumeReclaimPolicy, tt.wantPolicy)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTable(t *testing.T) {
	now := metav1.Now()
	tests := []registrytest.Row{
		{
			Name: "available",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Status.Phase = corev1.VolumeAvailable
			}),
			Want: []any{"pv-1", "10Gi", "RWO", "Retain", "Available", "", "", "<unset>", "", "<unknown>", "Filesystem"},
		},
		{
			Name: "bound, modes in upstream's order, class from the beta annotation",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "legacy"}
				pv.Spec.StorageClassName = "fast"
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadOnlyMany, corev1.ReadWriteOnce, corev1.ReadWriteMany}
				pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "data"}
				pv.Spec.VolumeAttributesClassName = ptr.To("gold")
				pv.Spec.VolumeMode = nil
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
				pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, Reason: "Why"}
			}),
			Want: []any{"pv-1", "10Gi", "RWO,ROX,RWX", "Delete", "Bound", "default/data", "legacy", "gold", "Why", "<unknown>", "<unset>"},
		},
		{
			Name: "deleted",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.DeletionTimestamp = &now
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
				pv.Status.Phase = corev1.VolumeReleased
			}),
			Want: []any{"pv-1", "10Gi", "RWOP", "Retain", "Terminating", "", "", "<unset>", "", "<unknown>", "Filesystem"},
		},
	}
	store := registrytest.REST(t, NewStorage, "persistentvolumes")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.Obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			wantColumns := []string{"Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode"}
			if diff := cmp.Diff(wantColumns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if got := table.ColumnDefinitions[len(table.ColumnDefinitions)-1].Priority; got != 1 {
				t.Errorf("VolumeMode priority: got %d, want 1", got)
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
