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

package volumeattributesclass

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const (
	dnsSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
		`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	qualifiedName = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
		"(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') " +
		"with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)

func validClass() *storagev1.VolumeAttributesClass {
	return &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gold", UID: "uid-1", ResourceVersion: "1"},
		DriverName: "ebs.csi.aws.com",
		Parameters: map[string]string{"iops": "4000", "throughput": "250"},
	}
}

func modified(vac *storagev1.VolumeAttributesClass, mutate func(*storagev1.VolumeAttributesClass)) *storagev1.VolumeAttributesClass {
	vac = vac.DeepCopy()
	mutate(vac)
	return vac
}

func TestStorage(t *testing.T) {
	registrytest.Storages(t, NewStorage, "volumeattributesclasses", "volumeattributesclasses")
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	registrytest.CheckShape(t, store, registrytest.Shape{
		Resource: storagev1.Resource("volumeattributesclasses"), Singular: "volumeattributesclass", ShortNames: []string{"vac"},
	})
	if !store.DeleteReturnsDeletedObject() {
		t.Errorf("DeleteReturnsDeletedObject: got false, want true (as upstream's store)")
	}
}

// TestValidate: upstream's ValidateVolumeAttributesClass, with its paths and messages.
func TestValidate(t *testing.T) {
	manyParams := map[string]string{}
	for i := range maxParameters + 1 {
		manyParams[fmt.Sprint(i)] = "v"
	}
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttributesClass)
		want   []string
	}{
		{name: "valid", mutate: func(*storagev1.VolumeAttributesClass) {}, want: []string{}},
		{name: "upper-case driver", mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "Example.com/NFS" }, want: []string{}},
		{name: "empty parameter value", mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters["iops"] = "" }, want: []string{}},
		{
			name:   "name not a DNS subdomain",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Name = "Gold" },
			want:   []string{`metadata.name: Invalid value: "Gold": ` + dnsSubdomain},
		},
		{name: "no driver", mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "" }, want: []string{"driverName: Required value"}},
		{
			name:   "driver not a qualified name, shown lower-cased",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "Example.com/A/B" },
			want:   []string{`driverName: Invalid value: "example.com/a/b": ` + qualifiedName},
		},
		{
			name:   "no parameters",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters = nil },
			want:   []string{"parameters: Required value: must contain at least one key/value pair"},
		},
		{
			name:   "empty parameter key",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters[""] = "x" },
			want:   []string{`parameters: Invalid value: "": field can not be empty.`},
		},
		{
			name:   "too many parameters",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters = manyParams },
			want:   []string{"parameters: Too long: may not be more than 512 bytes"},
		},
		{
			name: "parameters too large",
			mutate: func(vac *storagev1.VolumeAttributesClass) {
				vac.Parameters["iops"] = strings.Repeat("9", maxParametersSize)
			},
			want: []string{"parameters: Too long: may not be more than 262144 bytes"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), modified(validClass(), tt.mutate)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateUpdate: upstream's ValidateVolumeAttributesClassUpdate: the
// driver and the parameters are immutable, reported before the create rules.
func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*storagev1.VolumeAttributesClass)
		want   []string
	}{
		{name: "labels change", mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Labels = map[string]string{"tier": "gold"} }, want: []string{}},
		{
			name:   "driver is immutable",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "pd.csi.storage.gke.io" },
			want:   []string{"driverName: Forbidden: updates to driverName are forbidden."},
		},
		{
			name:   "parameters are immutable",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters["iops"] = "8000" },
			want:   []string{"parameters: Forbidden: updates to parameters are forbidden."},
		},
		{
			name:   "parameters removed: immutable, then required",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters = nil },
			want: []string{
				"parameters: Forbidden: updates to parameters are forbidden.",
				"parameters: Required value: must contain at least one key/value pair",
			},
		},
		{
			name:   "driver removed: immutable, then required",
			mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "" },
			want:   []string{"driverName: Forbidden: updates to driverName are forbidden.", "driverName: Required value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := store.UpdateStrategy.ValidateUpdate(context.Background(), modified(validClass(), tt.mutate), validClass())
			if diff := cmp.Diff(tt.want, registrytest.Messages(got)); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrepareForCreateAndUpdate: upstream's strategy changes nothing.
func TestPrepareForCreateAndUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	registrytest.CheckPrepareKeeps(t, store, validClass(), validClass())
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "volumeattributesclasses"), validClass(), fields.Set{"metadata.name": "gold"})
}

func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	table, err := store.ConvertToTable(context.Background(), validClass(), nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	want := []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
		registry.AgeColumn,
	}
	if diff := cmp.Diff(want, table.ColumnDefinitions); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"gold", "ebs.csi.aws.com", "<unknown>"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
