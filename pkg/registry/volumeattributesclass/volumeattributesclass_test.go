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
	for i := range 512 + 1 { // upstream's limit on parameters, and one more
		manyParams[fmt.Sprint(i)] = "v"
	}
	tests := []registrytest.Mutation[*storagev1.VolumeAttributesClass]{
		{Name: "valid", Mutate: func(*storagev1.VolumeAttributesClass) {}, Want: []string{}},
		{Name: "upper-case driver", Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "Example.com/NFS" }, Want: []string{}},
		{Name: "empty parameter value", Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters["iops"] = "" }, Want: []string{}},
		{
			Name:   "name not a DNS subdomain",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Name = "Gold" },
			Want:   []string{`metadata.name: Invalid value: "Gold": ` + dnsSubdomain},
		},
		{Name: "no driver", Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "" }, Want: []string{"driverName: Required value"}},
		{
			Name:   "driver not a qualified name, shown lower-cased",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "Example.com/A/B" },
			Want:   []string{`driverName: Invalid value: "example.com/a/b": ` + qualifiedName},
		},
		{
			Name:   "no parameters",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters = nil },
			Want:   []string{"parameters: Required value: must contain at least one key/value pair"},
		},
		{
			Name:   "empty parameter key",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters[""] = "x" },
			Want:   []string{`parameters: Invalid value: "": field can not be empty.`},
		},
		{
			Name:   "too many parameters",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters = manyParams },
			Want:   []string{"parameters: Too long: may not be more than 512 bytes"},
		},
		{
			Name: "parameters too large",
			Mutate: func(vac *storagev1.VolumeAttributesClass) {
				vac.Parameters["iops"] = strings.Repeat("9", 256<<10) // upstream's limit on their size
			},
			Want: []string{"parameters: Too long: may not be more than 262144 bytes"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.Messages, validClass, tests)
}

// TestValidateUpdate: upstream's ValidateVolumeAttributesClassUpdate: the
// driver and the parameters are immutable, reported before the create rules.
func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.VolumeAttributesClass]{
		{Name: "labels change", Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Labels = map[string]string{"tier": "gold"} }, Want: []string{}},
		{
			Name:   "driver is immutable",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "pd.csi.storage.gke.io" },
			Want:   []string{"driverName: Forbidden: updates to driverName are forbidden."},
		},
		{
			Name:   "parameters are immutable",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters["iops"] = "8000" },
			Want:   []string{"parameters: Forbidden: updates to parameters are forbidden."},
		},
		{
			Name:   "parameters removed: immutable, then required",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.Parameters = nil },
			Want: []string{
				"parameters: Forbidden: updates to parameters are forbidden.",
				"parameters: Required value: must contain at least one key/value pair",
			},
		},
		{
			Name:   "driver removed: immutable, then required",
			Mutate: func(vac *storagev1.VolumeAttributesClass) { vac.DriverName = "" },
			Want:   []string{"driverName: Forbidden: updates to driverName are forbidden.", "driverName: Required value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "volumeattributesclasses")
	registrytest.ValidateUpdateMutations(t, store.UpdateStrategy, registrytest.Messages, validClass, tests)
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
