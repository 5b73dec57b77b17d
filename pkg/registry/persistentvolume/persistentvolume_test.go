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
	"strings"
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

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.PersistentVolume]{
		{Name: "valid hostPath", Obj: validPV(), Want: []string{}},
		{
			Name: "valid nfs, every access mode but RWOP",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/a"}}
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany}
			}),
			Want: []string{},
		},
		{
			Name: "valid local with node affinity",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/ssd1"}}
				pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}},
				}}}}
			}),
			Want: []string{},
		},
		{
			Name: "valid csi",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}
			}),
			Want: []string{},
		},
		{
			Name: "no volume source",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{} }),
			Want: []string{"spec: Required value"},
		},
		{
			Name: "two volume sources: the second one is reported",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports/a"}
			}),
			Want: []string{"spec.nfs: Forbidden"},
		},
		{
			Name: "a source checked in upstream's order: gcePersistentDisk after hostPath",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.GCEPersistentDisk = &corev1.GCEPersistentDiskVolumeSource{PDName: "disk-1"}
			}),
			Want: []string{"spec.gcePersistentDisk: Forbidden"},
		},
		{
			Name: "a source with no checks of its own",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: 0}}
			}),
			Want: []string{},
		},
		{
			Name: "no capacity",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil }),
			Want: []string{"spec.capacity: Required value", "spec.capacity: Unsupported value"},
		},
		{
			Name: "capacity without storage",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			}),
			Want: []string{"spec.capacity: Unsupported value"},
		},
		{
			Name: "capacity with storage and more",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.Capacity[corev1.ResourceMemory] = resource.MustParse("1Gi")
			}),
			Want: []string{"spec.capacity: Unsupported value"},
		},
		{
			Name: "zero storage",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0") }),
			Want: []string{"spec.capacity[storage]: Invalid value"},
		},
		{
			Name: "no access modes",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }),
			Want: []string{"spec.accessModes: Required value"},
		},
		{
			Name: "unknown access mode",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteSometimes"}
			}),
			Want: []string{"spec.accessModes: Unsupported value"},
		},
		{
			Name: "ReadWriteOncePod alone",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}
			}),
			Want: []string{},
		},
		{
			Name: "ReadWriteOncePod with another mode",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadOnlyMany}
			}),
			Want: []string{"spec.accessModes: Forbidden"},
		},
		{
			Name: "hostPath without a path",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "" }),
			Want: []string{"spec.hostPath.path: Required value"},
		},
		{
			Name: "hostPath with ..",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/data/../etc" }),
			Want: []string{"spec.hostPath.path: Invalid value"},
		},
		{
			Name: "hostPath of an unknown type",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Type = ptr.To(corev1.HostPathType("Pipe")) }),
			Want: []string{"spec.hostPath.type: Unsupported value"},
		},
		{
			Name: "recycling a hostPath of /",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.HostPath.Path = "/"
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
			}),
			Want: []string{"spec.persistentVolumeReclaimPolicy: Forbidden"},
		},
		{
			Name: "nfs without server and path",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{}}
			}),
			// An empty path is also not absolute, as upstream reports it.
			Want: []string{"spec.nfs.path: Invalid value", "spec.nfs.path: Required value", "spec.nfs.server: Required value"},
		},
		{
			Name: "nfs with a relative path",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "exports"}}
			}),
			Want: []string{"spec.nfs.path: Invalid value"},
		},
		{
			Name: "local without node affinity or path",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{}}
			}),
			Want: []string{"spec.local.path: Required value", "spec.nodeAffinity: Required value"},
		},
		{
			Name: "node affinity without required terms",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{} }),
			Want: []string{"spec.nodeAffinity.required: Required value"},
		},
		{
			Name: "csi without driver and handle",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{}}
			}),
			Want: []string{"spec.csi.driver: Invalid value", "spec.csi.driver: Required value", "spec.csi.volumeHandle: Required value"},
		},
		{
			Name: "csi driver too long",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: strings.Repeat("d", 64), VolumeHandle: "v"}}
			}),
			Want: []string{"spec.csi.driver: Too long"},
		},
		{
			Name: "bad storageClassName, volumeMode and reclaim policy",
			Obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.StorageClassName = "Fast_SSD"
				pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Object"))
				pv.Spec.PersistentVolumeReclaimPolicy = "Keep"
			}),
			Want: []string{"spec.persistentVolumeReclaimPolicy: Unsupported value", "spec.storageClassName: Invalid value", "spec.volumeMode: Unsupported value"},
		},
		{
			Name: "namespaced name is refused",
			Obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Namespace = "default" }),
			Want: []string{"metadata.namespace: Forbidden"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "persistentvolumes").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	csiPV := registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
		pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}
	})
	affinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
	}}}}
	tests := []struct {
		name     string
		old, obj *corev1.PersistentVolume
		want     []string
	}{
		{
			name: "capacity, reclaim policy, claimRef and class may change",
			old:  validPV(),
			obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("20Gi")
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
				pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "data"}
				pv.Spec.StorageClassName = "fast"
			}),
			want: []string{},
		},
		{
			name: "the volume source is immutable",
			old:  validPV(),
			obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/data/other" }),
			want: []string{"spec.persistentvolumesource: Forbidden"},
		},
		{
			name: "a csi volume may gain a controllerExpandSecretRef",
			old:  csiPV,
			obj: registrytest.Modified(csiPV, func(pv *corev1.PersistentVolume) {
				pv.Spec.CSI.ControllerExpandSecretRef = &corev1.SecretReference{Name: "expand", Namespace: "kube-system"}
			}),
			want: []string{},
		},
		{
			name: "volumeMode is immutable",
			old:  validPV(),
			obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }),
			want: []string{"volumeMode: Invalid value"},
		},
		{
			name: "node affinity may be set",
			old:  validPV(),
			obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = affinity }),
			want: []string{},
		},
		{
			name: "node affinity, once set, is immutable",
			old:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = affinity }),
			obj: registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
				pv.Spec.NodeAffinity = affinity.DeepCopy()
				pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{"b"}
			}),
			want: []string{"nodeAffinity: Invalid value"},
		},
		{
			name: "the create rules apply too",
			old:  validPV(),
			obj:  registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }),
			want: []string{"spec.accessModes: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "persistentvolumes").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
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
