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

package csistoragecapacity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const (
	dnsSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
		`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	labelValue = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
		"(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

// validCapacity is a capacity as external-provisioner publishes it.
func validCapacity() *storagev1.CSIStorageCapacity {
	return &storagev1.CSIStorageCapacity{
		ObjectMeta:       metav1.ObjectMeta{Name: "csisc-abcde", Namespace: "kube-system", UID: "uid-1", ResourceVersion: "1"},
		NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": "us-east-1a"}},
		StorageClassName: "fast",
		Capacity:         ptr.To(resource.MustParse("100Gi")),
	}
}

func TestStorage(t *testing.T) {
	registrytest.Storages(t, NewStorage, "csistoragecapacities", "csistoragecapacities")
	store := registrytest.REST(t, NewStorage, "csistoragecapacities")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: storagev1.Resource("csistoragecapacities"), Singular: "csistoragecapacity", Namespaced: true})
	// Upstream's store leaves ReturnDeletedObject unset: a DELETE answers a Status.
	if store.DeleteReturnsDeletedObject() {
		t.Errorf("DeleteReturnsDeletedObject: got true, want false (as upstream's store)")
	}
}

// TestValidate: upstream's ValidateCSIStorageCapacity, with its paths and messages.
func TestValidate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.CSIStorageCapacity]{
		{Name: "valid", Mutate: func(*storagev1.CSIStorageCapacity) {}, Want: []string{}},
		{Name: "no topology: no node has access", Mutate: func(c *storagev1.CSIStorageCapacity) { c.NodeTopology = nil }, Want: []string{}},
		{Name: "empty topology: every node has", Mutate: func(c *storagev1.CSIStorageCapacity) { c.NodeTopology = &metav1.LabelSelector{} }, Want: []string{}},
		{Name: "no capacity", Mutate: func(c *storagev1.CSIStorageCapacity) { c.Capacity = nil }, Want: []string{}},
		{Name: "zero capacity", Mutate: func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptr.To(resource.MustParse("0")) }, Want: []string{}},
		{
			Name:   "negative maximum volume size is not checked",
			Mutate: func(c *storagev1.CSIStorageCapacity) { c.MaximumVolumeSize = ptr.To(resource.MustParse("-1Gi")) },
			Want:   []string{},
		},
		{
			Name:   "name not a DNS subdomain",
			Mutate: func(c *storagev1.CSIStorageCapacity) { c.Name = "Bad_Name" },
			Want:   []string{`metadata.name: Invalid value: "Bad_Name": ` + dnsSubdomain},
		},
		{
			Name:   "no namespace",
			Mutate: func(c *storagev1.CSIStorageCapacity) { c.Namespace = "" },
			Want:   []string{"metadata.namespace: Required value"},
		},
		{
			Name:   "no storage class name",
			Mutate: func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = "" },
			Want:   []string{`storageClassName: Invalid value: "": ` + dnsSubdomain},
		},
		{
			Name:   "storage class name not a DNS subdomain",
			Mutate: func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = "Fast" },
			Want:   []string{`storageClassName: Invalid value: "Fast": ` + dnsSubdomain},
		},
		{
			Name:   "negative capacity",
			Mutate: func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptr.To(resource.MustParse("-1Gi")) },
			Want:   []string{`capacity: Invalid value: "-1Gi": must be greater than or equal to 0`},
		},
		{
			Name: "bad label value",
			Mutate: func(c *storagev1.CSIStorageCapacity) {
				c.NodeTopology.MatchLabels["topology.kubernetes.io/zone"] = "us east"
			},
			Want: []string{`nodeTopology.matchLabels: Invalid value: "us east": ` + labelValue},
		},
		{
			Name: "bad expression",
			Mutate: func(c *storagev1.CSIStorageCapacity) {
				c.NodeTopology.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: metav1.LabelSelectorOpIn}}
			},
			Want: []string{"nodeTopology.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"},
		},
	}
	store := registrytest.REST(t, NewStorage, "csistoragecapacities")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.Messages, validCapacity, tests)
}

// TestValidateUpdate: upstream's ValidateCSIStorageCapacityUpdate: the
// inputs of GetCapacity are immutable, its outputs are not; a bad value
// a stored expression has may stay (matchLabels' may not, as upstream's).
func TestValidateUpdate(t *testing.T) {
	badValue := func(c *storagev1.CSIStorageCapacity) {
		c.NodeTopology.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"us east"}}}
	}
	badLabel := func(c *storagev1.CSIStorageCapacity) {
		c.NodeTopology.MatchLabels["topology.kubernetes.io/zone"] = "us east"
	}
	tests := []struct {
		name        string
		old, mutate func(*storagev1.CSIStorageCapacity)
		want        []string
	}{
		{name: "capacity changes", mutate: func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptr.To(resource.MustParse("50Gi")) }, want: []string{}},
		{
			name:   "maximum volume size changes",
			mutate: func(c *storagev1.CSIStorageCapacity) { c.MaximumVolumeSize = ptr.To(resource.MustParse("10Gi")) },
			want:   []string{},
		},
		{
			name: "node topology is immutable",
			mutate: func(c *storagev1.CSIStorageCapacity) {
				c.NodeTopology.MatchLabels["topology.kubernetes.io/zone"] = "us-east-1b"
			},
			want: []string{`nodeTopology: Invalid value: {"matchLabels":{"topology.kubernetes.io/zone":"us-east-1b"}}: field is immutable`},
		},
		{
			name:   "node topology removed",
			mutate: func(c *storagev1.CSIStorageCapacity) { c.NodeTopology = nil },
			want:   []string{"nodeTopology: Invalid value: null: field is immutable"},
		},
		{
			name:   "storage class is immutable",
			mutate: func(c *storagev1.CSIStorageCapacity) { c.StorageClassName = "slow" },
			want:   []string{`storageClassName: Invalid value: "slow": field is immutable`},
		},
		{
			name:   "update also validates",
			mutate: func(c *storagev1.CSIStorageCapacity) { c.Capacity = ptr.To(resource.MustParse("-1")) },
			want:   []string{`capacity: Invalid value: "-1": must be greater than or equal to 0`},
		},
		{name: "a stored bad value may stay", old: badValue, mutate: func(*storagev1.CSIStorageCapacity) {}, want: []string{}},
		{
			name: "a new bad value may not come", mutate: badValue,
			want: []string{
				`nodeTopology.matchExpressions[0].values[0]: Invalid value: "us east": ` + labelValue,
				`nodeTopology: Invalid value: {"matchLabels":{"topology.kubernetes.io/zone":"us-east-1a"},` +
					`"matchExpressions":[{"key":"zone","operator":"In","values":["us east"]}]}: field is immutable`,
			},
		},
		{
			name: "a bad label value may not stay", old: badLabel, mutate: badLabel,
			want: []string{`nodeTopology.matchLabels: Invalid value: "us east": ` + labelValue},
		},
	}
	store := registrytest.REST(t, NewStorage, "csistoragecapacities")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validCapacity()
			if tt.old != nil {
				tt.old(old)
			}
			got := store.UpdateStrategy.ValidateUpdate(context.Background(), registrytest.Modified(old, tt.mutate), old)
			if diff := cmp.Diff(tt.want, registrytest.Messages(got)); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrepareForCreateAndUpdate: upstream's strategy changes nothing.
func TestPrepareForCreateAndUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "csistoragecapacities")
	registrytest.CheckPrepareKeeps(t, store, validCapacity(), validCapacity())
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "csistoragecapacities")
	registrytest.CheckFields(t, store, validCapacity(), fields.Set{"metadata.name": "csisc-abcde", "metadata.namespace": "kube-system"})
}

// TestTable: upstream's store prints with the default table (name, creation time).
func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "csistoragecapacities")
	c := validCapacity()
	c.CreationTimestamp = metav1.Unix(1700000000, 0)
	table, err := store.ConvertToTable(context.Background(), c, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	description := metav1.ObjectMeta{}.SwaggerDoc()
	want := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: description["name"]},
		{Name: "Created At", Type: "date", Description: description["creationTimestamp"]},
	}
	if diff := cmp.Diff(want, table.ColumnDefinitions); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"csisc-abcde", "2023-11-14T22:13:20Z"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
