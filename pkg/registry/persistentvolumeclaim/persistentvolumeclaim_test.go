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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validPVC returns a defaulted, pending claim that passes validation.
func validPVC() *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	api.Scheme.Default(pvc)
	return pvc
}

// boundPVC returns validPVC bound to volume pv-1.
// withAppliedClass gives a claim the volume attributes class name, as
// spec and as the class its volume has (status.currentVolumeAttributesClassName).
func withAppliedClass(name string) func(*corev1.PersistentVolumeClaim) {
	return func(pvc *corev1.PersistentVolumeClaim) {
		pvc.Spec.VolumeAttributesClassName, pvc.Status.CurrentVolumeAttributesClassName = ptr.To(name), ptr.To(name)
	}
}

func boundPVC() *corev1.PersistentVolumeClaim {
	return registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
		pvc.Spec.VolumeName = "pv-1"
		pvc.Status = corev1.PersistentVolumeClaimStatus{
			Phase:       corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany},
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")},
		}
	})
}

func TestStorage(t *testing.T) {
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("persistentvolumeclaims"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	if _, ok := storages["persistentvolumeclaims/status"].(*registry.StatusREST); !ok {
		t.Errorf("storage %q: got %T, want *registry.StatusREST", "persistentvolumeclaims/status", storages["persistentvolumeclaims/status"])
	}
	store := registrytest.REST(t, NewStorage, "persistentvolumeclaims")
	if !store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if diff := cmp.Diff([]string{"pvc"}, store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths("v1", "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "persistentvolumeclaims", "persistentvolumeclaims", "persistentvolumeclaims/status")
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.PersistentVolumeClaim]{
		{Name: "valid", Obj: validPVC(), Want: []string{}},
		{
			Name: "valid with class, selector and block mode",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.StorageClassName = ptr.To("fast")
				pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}
				pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
			}),
			Want: []string{},
		},
		{
			Name: "empty storageClassName (no dynamic provisioning)",
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = ptr.To("") }),
			Want: []string{},
		},
		{
			Name: "no access modes",
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.AccessModes = nil }),
			Want: []string{"spec.accessModes: Required value"},
		},
		{
			Name: "unknown access mode",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, "WriteOnly"}
			}),
			Want: []string{"spec.accessModes: Unsupported value"},
		},
		{
			Name: "ReadWriteOncePod with another mode",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
			}),
			Want: []string{"spec.accessModes: Forbidden"},
		},
		{
			Name: "no storage request",
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.Resources.Requests = nil }),
			Want: []string{"spec.resources[storage]: Required value"},
		},
		{
			Name: "zero storage request",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
			}),
			Want: []string{"spec.resources[storage]: Invalid value"},
		},
		{
			Name: "negative storage request",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("-1Gi")
			}),
			Want: []string{"spec.resources[storage]: Invalid value"},
		},
		{
			Name: "bad class, mode and selector",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.StorageClassName = ptr.To("Fast SSD")
				pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeMode("Object"))
				pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "v"}}
			}),
			Want: []string{"spec.selector.matchLabels: Invalid value", "spec.storageClassName: Invalid value", "spec.volumeMode: Unsupported value"},
		},
		{
			Name: "a data source of the core group that is no claim, and a data source ref unlike it",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Secret", Name: "s"}
				pvc.Spec.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "other"}
			}),
			Want: []string{"spec.dataSource: Invalid value", "spec: Invalid value"},
		},
		{
			Name: "a data source ref of a snapshot",
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				ref := &corev1.TypedObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "snap"}
				pvc.Spec.DataSourceRef = ref
			}),
			Want: []string{},
		},
		{
			Name: "no namespace",
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Namespace = "" }),
			Want: []string{"metadata.namespace: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "persistentvolumeclaims").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	storage := func(q string) func(*corev1.PersistentVolumeClaim) {
		return func(pvc *corev1.PersistentVolumeClaim) {
			pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse(q)
		}
	}
	tests := []registrytest.Change[*corev1.PersistentVolumeClaim]{
		{Name: "unchanged", Old: validPVC(), Obj: validPVC(), Want: []string{}},
		{
			Name: "labels may change",
			Old:  validPVC(),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Labels = map[string]string{"a": "b"} }),
			Want: []string{},
		},
		{
			Name: "volumeName may be set once",
			Old:  validPVC(),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeName = "pv-1" }),
			Want: []string{},
		},
		{
			Name: "volumeName may not change once set",
			Old:  boundPVC(),
			Obj:  registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeName = "pv-2" }),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "storageClassName may be set when nil (retroactive default class)",
			Old:  validPVC(),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = ptr.To("standard") }),
			Want: []string{},
		},
		{
			Name: "storageClassName may be set to the beta annotation's value",
			Old: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "gold"}
			}),
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "gold"}
				pvc.Spec.StorageClassName = ptr.To("gold")
			}),
			Want: []string{},
		},
		{
			Name: "storageClassName may not contradict the beta annotation",
			Old: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "gold"}
			}),
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "gold"}
				pvc.Spec.StorageClassName = ptr.To("silver")
			}),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "storageClassName may not change once set",
			Old:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = ptr.To("standard") }),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.StorageClassName = ptr.To("fast") }),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "accessModes are immutable",
			Old:  validPVC(),
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
			}),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "selector is immutable",
			Old:  validPVC(),
			Obj: registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
			}),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "volumeMode is immutable (also reported at upstream's path volumeMode)",
			Old:  validPVC(),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock) }),
			Want: []string{"spec: Forbidden", "volumeMode: Invalid value"},
		},
		{
			Name: "a bound claim may grow",
			Old:  boundPVC(),
			Obj:  registrytest.Modified(boundPVC(), storage("5Gi")),
			Want: []string{},
		},
		{
			Name: "a pending claim may not be resized",
			Old:  validPVC(),
			Obj:  registrytest.Modified(validPVC(), storage("5Gi")),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "a bound claim may not shrink",
			Old:  boundPVC(),
			Obj:  registrytest.Modified(boundPVC(), storage("500Mi")),
			Want: []string{"spec.resources.requests.storage: Forbidden"},
		},
		{
			Name: "limits are not requests",
			Old:  boundPVC(),
			Obj: registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}
			}),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "volumeAttributesClassName may be set and changed",
			Old:  registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("silver") }),
			Obj:  registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("gold") }),
			Want: []string{},
		},
		{
			Name: "volumeAttributesClassName may be unset before it applies",
			Old:  registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("silver") }),
			Obj:  boundPVC(),
			Want: []string{},
		},
		{
			Name: "volumeAttributesClassName may not be unset once applied",
			Old:  registrytest.Modified(boundPVC(), withAppliedClass("silver")),
			Obj: registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Status.CurrentVolumeAttributesClassName = ptr.To("silver")
			}),
			Want: []string{"spec.volumeAttributesClassName: Forbidden"},
		},
		{
			Name: "volumeAttributesClassName may not be emptied once applied",
			Old:  registrytest.Modified(boundPVC(), withAppliedClass("silver")),
			Obj: registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) {
				withAppliedClass("silver")(pvc)
				pvc.Spec.VolumeAttributesClassName = ptr.To("")
			}),
			Want: []string{"spec.volumeAttributesClassName: Forbidden"},
		},
		{
			Name: "a pending claim's volumeAttributesClassName may not change",
			Old:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("silver") }),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeAttributesClassName = ptr.To("gold") }),
			Want: []string{"spec: Forbidden"},
		},
		{
			Name: "the create rules apply too",
			Old:  validPVC(),
			Obj:  registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.AccessModes = nil }),
			Want: []string{"spec.accessModes: Required value", "spec: Forbidden"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "persistentvolumeclaims").UpdateStrategy
	registrytest.ValidateUpdateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestSpecForbiddenMessage(t *testing.T) {
	strategy := registrytest.REST(t, NewStorage, "persistentvolumeclaims").UpdateStrategy
	errs := strategy.ValidateUpdate(context.Background(), registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.VolumeName = "pv-2" }), boundPVC())
	if len(errs) != 1 {
		t.Fatalf("errors: got %v, want one", errs)
	}
	const want = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
	if !strings.HasPrefix(errs[0].Detail, want) || !strings.Contains(errs[0].Detail, "pv-2") {
		t.Errorf("detail: got %q, want %q and a diff naming pv-2", errs[0].Detail, want)
	}
}

func TestPrepareForCreate(t *testing.T) {
	pvc := registrytest.Modified(boundPVC(), func(pvc *corev1.PersistentVolumeClaim) {
		pvc.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: "Resizing"}}
	})
	registrytest.REST(t, NewStorage, "persistentvolumeclaims").CreateStrategy.PrepareForCreate(context.Background(), pvc)
	if diff := cmp.Diff(corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}, pvc.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if pvc.Spec.VolumeName != "pv-1" {
		t.Errorf("volumeName after PrepareForCreate: got %q, want pv-1", pvc.Spec.VolumeName)
	}
}

// TestDataSources: as upstream's strategy, a new claim's dataSource and
// dataSourceRef are made one another's copy, and a dataSource that is no
// claim or snapshot, set alone, is dropped; an update keeps an old claim's.
func TestDataSources(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "persistentvolumeclaims")
	snapshot := &corev1.TypedLocalObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "snap"}
	secret := &corev1.TypedLocalObjectReference{Kind: "Secret", Name: "s"}
	populator := &corev1.TypedObjectReference{APIGroup: ptr.To("example.com"), Kind: "Populator", Name: "p"}
	elsewhere := &corev1.TypedObjectReference{APIGroup: ptr.To("example.com"), Kind: "Populator", Name: "p", Namespace: ptr.To("other")}
	for _, tt := range []struct {
		name    string
		ds      *corev1.TypedLocalObjectReference
		ref     *corev1.TypedObjectReference
		wantDS  *corev1.TypedLocalObjectReference
		wantRef *corev1.TypedObjectReference
	}{
		{"a snapshot", snapshot, nil, snapshot, &corev1.TypedObjectReference{APIGroup: snapshot.APIGroup, Kind: snapshot.Kind, Name: snapshot.Name}},
		{"a secret, dropped", secret, nil, nil, nil},
		{"a populator by reference", nil, populator, &corev1.TypedLocalObjectReference{APIGroup: populator.APIGroup, Kind: populator.Kind, Name: populator.Name}, populator},
		{"a reference to another namespace", nil, elsewhere, nil, elsewhere},
	} {
		pvc := registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.DataSource, pvc.Spec.DataSourceRef = tt.ds, tt.ref })
		store.CreateStrategy.PrepareForCreate(context.Background(), pvc)
		if diff := cmp.Diff(tt.wantDS, pvc.Spec.DataSource); diff != "" {
			t.Errorf("%s: dataSource (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.wantRef, pvc.Spec.DataSourceRef); diff != "" {
			t.Errorf("%s: dataSourceRef (-want +got):\n%s", tt.name, diff)
		}
	}
	old := registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) { pvc.Spec.DataSource = secret })
	updated := old.DeepCopy()
	store.UpdateStrategy.PrepareForUpdate(context.Background(), updated, old)
	if updated.Spec.DataSource == nil || updated.Spec.DataSourceRef == nil || updated.Spec.DataSourceRef.Kind != "Secret" {
		t.Errorf("an old claim's secret data source on update: %+v, %+v, want it kept and copied", updated.Spec.DataSource, updated.Spec.DataSourceRef)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// persistentvolumeclaims and of persistentvolumeclaims/status.
func TestUpdateThroughStores(t *testing.T) {
	stored := boundPVC()
	newStatus := corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost}
	tests := []struct {
		name       string
		status     bool
		wantSize   string
		wantStatus corev1.PersistentVolumeClaimStatus
	}{
		{name: "persistentvolumeclaims: a bound claim grows, status kept", wantSize: "5Gi", wantStatus: stored.Status},
		{name: "persistentvolumeclaims/status: status changes, spec kept", status: true, wantSize: "1Gi", wantStatus: newStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "persistentvolumeclaims", tt.status, stored, func(pvc *corev1.PersistentVolumeClaim) {
				pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("5Gi")
				pvc.Status = newStatus
			})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			if size := got.Spec.Resources.Requests[corev1.ResourceStorage]; size.String() != tt.wantSize {
				t.Errorf("requested storage: got %s, want %s", size.String(), tt.wantSize)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
