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

package storageclass

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "fast", UID: "uid-1", ResourceVersion: "1"},
		Provisioner:       "ebs.csi.aws.com",
		Parameters:        map[string]string{"type": "gp3"},
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: "topology.kubernetes.io/zone", Values: []string{"us-east-1a", "us-east-1b"}},
		}}},
	}
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "storageclasses")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: storagev1.Resource("storageclasses"), Singular: "storageclass", ShortNames: []string{"sc"}})
}

func TestValidate(t *testing.T) {
	manyParams := map[string]string{}
	for i := 0; i <= maxParameters; i++ {
		manyParams[fmt.Sprint(i)] = "v"
	}
	tests := []registrytest.Mutation[*storagev1.StorageClass]{
		{Name: "valid", Mutate: func(*storagev1.StorageClass) {}, Want: []string{}},
		{Name: "upper-case provisioner", Mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "Example.com/NFS" }, Want: []string{}},
		{Name: "no provisioner", Mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "" }, Want: []string{"provisioner: Required value"}},
		{Name: "bad provisioner", Mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "a/b/c" }, Want: []string{"provisioner: Invalid value"}},
		{Name: "empty parameter key", Mutate: func(sc *storagev1.StorageClass) { sc.Parameters[""] = "x" }, Want: []string{"parameters: Invalid value"}},
		{Name: "too many parameters", Mutate: func(sc *storagev1.StorageClass) { sc.Parameters = manyParams }, Want: []string{"parameters: Too long"}},
		{
			Name:   "Recycle is not a class reclaim policy",
			Mutate: func(sc *storagev1.StorageClass) { sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRecycle) },
			Want:   []string{"reclaimPolicy: Unsupported value"},
		},
		{Name: "no binding mode", Mutate: func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = nil }, Want: []string{"volumeBindingMode: Required value"}},
		{
			Name:   "unknown binding mode",
			Mutate: func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingMode("Later")) },
			Want:   []string{"volumeBindingMode: Unsupported value"},
		},
		{
			Name: "topology: no values, duplicate value and key, bad key",
			Mutate: func(sc *storagev1.StorageClass) {
				sc.AllowedTopologies[0].MatchLabelExpressions = []corev1.TopologySelectorLabelRequirement{
					{Key: "zone", Values: []string{"a", "a"}}, {Key: "zone"}, {Key: "bad key!", Values: []string{"x"}},
				}
			},
			Want: []string{
				"allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value", "allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value",
				"allowedTopologies[0].matchLabelExpressions[1].values: Required value", "allowedTopologies[0].matchLabelExpressions[2].key: Invalid value",
			},
		},
		{
			Name: "topology: duplicate term",
			Mutate: func(sc *storagev1.StorageClass) {
				sc.AllowedTopologies = append(sc.AllowedTopologies, sc.AllowedTopologies[0])
			},
			Want: []string{"allowedTopologies[1].matchLabelExpressions: Duplicate value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "storageclasses")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.ErrorPaths, validClass, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.StorageClass]{
		{Name: "labels, mount options, expansion and topologies may change", Mutate: func(sc *storagev1.StorageClass) {
			sc.Labels, sc.MountOptions, sc.AllowVolumeExpansion, sc.AllowedTopologies = map[string]string{"a": "b"}, []string{"ro"}, ptr.To(true), nil
		}, Want: []string{}},
		{Name: "provisioner", Mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "other.example.com" }, Want: []string{"provisioner: Invalid value"}},
		{Name: "parameters", Mutate: func(sc *storagev1.StorageClass) { sc.Parameters["type"] = "io2" }, Want: []string{"parameters: Invalid value"}},
		{
			Name:   "reclaimPolicy",
			Mutate: func(sc *storagev1.StorageClass) { sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain) },
			Want:   []string{"reclaimPolicy: Invalid value"},
		},
		{
			Name:   "volumeBindingMode",
			Mutate: func(sc *storagev1.StorageClass) { sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate) },
			Want:   []string{"volumeBindingMode: Invalid value"},
		},
		{Name: "update also validates", Mutate: func(sc *storagev1.StorageClass) { sc.AllowedTopologies[0].MatchLabelExpressions[0].Values = nil }, Want: []string{
			"allowedTopologies[0].matchLabelExpressions[0].values: Required value"}},
	}
	store := registrytest.REST(t, NewStorage, "storageclasses")
	registrytest.ValidateUpdateMutations(t, store.UpdateStrategy, registrytest.ErrorPaths, validClass, tests)
}

func TestPrepareKeepsEverything(t *testing.T) {
	registrytest.CheckPrepareKeeps(t, registrytest.REST(t, NewStorage, "storageclasses"), validClass(), validClass())
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "storageclasses"), validClass(), fields.Set{"metadata.name": "fast"})
}

func TestTable(t *testing.T) {
	asDefault := func(name string, created time.Time, annotation string) storagev1.StorageClass {
		sc := *registrytest.Modified(validClass(), func(sc *storagev1.StorageClass) {
			sc.Name, sc.CreationTimestamp = name, metav1.NewTime(created)
			if annotation != "" {
				sc.Annotations = map[string]string{annotation: "true"}
			}
		})
		return sc
	}
	t0 := time.Now().Add(-time.Hour)
	tests := []struct {
		name      string
		object    any
		wantNames []any
	}{
		{name: "single default class: no marker", object: ptr.To(asDefault("fast", t0, isDefaultAnnotation)), wantNames: []any{"fast"}},
		{
			name: "list: the newest default is marked",
			object: &storagev1.StorageClassList{Items: []storagev1.StorageClass{
				asDefault("old", t0, isDefaultAnnotation), asDefault("new", t0.Add(time.Minute), betaIsDefaultAnnotation), asDefault("plain", t0.Add(2*time.Minute), ""),
			}},
			wantNames: []any{"old", "new (default)", "plain"},
		},
		{
			name: "list: a tie goes to the first name",
			object: &storagev1.StorageClassList{Items: []storagev1.StorageClass{
				asDefault("b", t0, isDefaultAnnotation), asDefault("a", t0, isDefaultAnnotation),
			}},
			wantNames: []any{"b", "a (default)"},
		},
	}
	store := registrytest.REST(t, NewStorage, "storageclasses")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var table *metav1.Table
			var err error
			switch o := tt.object.(type) {
			case *storagev1.StorageClass:
				table, err = store.ConvertToTable(context.Background(), o, nil)
			case *storagev1.StorageClassList:
				table, err = store.ConvertToTable(context.Background(), o, nil)
			}
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			var names []any
			for _, row := range table.Rows {
				names = append(names, row.Cells[0])
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("cells", func(t *testing.T) {
		sc := registrytest.Modified(validClass(), func(sc *storagev1.StorageClass) { sc.ReclaimPolicy, sc.VolumeBindingMode = nil, nil })
		table, err := store.ConvertToTable(context.Background(), sc, nil)
		if err != nil {
			t.Fatalf("ConvertToTable: got error %v, want none", err)
		}
		want := []any{"fast", "ebs.csi.aws.com", "Delete", "Immediate", false, "<unknown>"}
		if diff := cmp.Diff(want, table.Rows[0].Cells); diff != "" {
			t.Errorf("cells (-want +got):\n%s", diff)
		}
	})
}

// TestImmutableFieldMessage: as 1.37's declarative validation reports it,
// with no value.
func TestImmutableFieldMessage(t *testing.T) {
	errs := declarative(registrytest.Modified(validClass(), func(sc *storagev1.StorageClass) { sc.Provisioner = "other.example.com" }), validClass())
	if want := "provisioner: Invalid value: null: field is immutable"; len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("got %v, want %s", errs, want)
	}
}
