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

package csinode

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const (
	dnsSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
		`(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	namePart = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
		"(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	zone = "topology.kubernetes.io/zone"
)

// validNode is a node with one driver, as the kubelet registers it.
func validNode() *storagev1.CSINode {
	return &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "uid-1", ResourceVersion: "1"},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
			Name: "ebs.csi.aws.com", NodeID: "i-0123", TopologyKeys: []string{zone},
			Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](25)},
		}}},
	}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "csinodes", "csinodes", "csinodes/status")
	status, ok := storages["csinodes/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "csinodes/status", storages["csinodes/status"])
	}
	store := storages["csinodes"].(*registry.REST)
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: storagev1.Resource("csinodes"), Singular: "csinode"})
	// Upstream's reset fields: status on the resource; metadata and spec on /status.
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "metadata", "spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
	if !store.DeleteReturnsDeletedObject() {
		t.Errorf("DeleteReturnsDeletedObject: got false, want true (as upstream's store)")
	}
}

// TestValidate: upstream's ValidateCSINode, with its paths and messages.
func TestValidate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.CSINode]{
		{Name: "valid", Mutate: func(*storagev1.CSINode) {}, Want: []string{}},
		{Name: "no drivers", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers = nil }, Want: []string{}},
		{Name: "upper-case driver name", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Name = "EBS.csi.aws.com" }, Want: []string{}},
		{Name: "no topology keys, no allocatable", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys, n.Spec.Drivers[0].Allocatable = nil, nil }, Want: []string{}},
		{Name: "name not a DNS subdomain", Mutate: func(n *storagev1.CSINode) { n.Name = "Node_1" }, Want: []string{`metadata.name: Invalid value: "Node_1": ` + dnsSubdomain}},
		{Name: "no driver name", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Name = "" }, Want: []string{"spec.drivers[0].name: Required value"}},
		{
			Name:   "driver name too long",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Name = strings.Repeat("a", 64) },
			Want:   []string{"spec.drivers[0].name: Too long: may not be more than 63 bytes"},
		},
		{
			Name:   "driver name not a DNS subdomain",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Name = "EBS_CSI" },
			Want:   []string{`spec.drivers[0].name: Invalid value: "EBS_CSI": ` + dnsSubdomain},
		},
		{Name: "no node ID", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = "" }, Want: []string{"spec.drivers[0].nodeID: Required value"}},
		{
			Name:   "node ID too long",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = strings.Repeat("i", 257) },
			Want:   []string{`spec.drivers[0].nodeID: Invalid value: "` + strings.Repeat("i", 257) + `": must be 256 characters or less`},
		},
		{
			Name:   "negative allocatable count",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](-1) },
			Want:   []string{"spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"},
		},
		{
			Name:   "duplicate driver",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers = append(n.Spec.Drivers, n.Spec.Drivers[0]) },
			Want:   []string{`spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"`},
		},
		{
			Name:   "empty topology key",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys = []string{""} },
			Want: []string{
				"spec.drivers[0]: Required value",
				`spec.drivers[0]: Invalid value: "": name part must be non-empty`,
				`spec.drivers[0]: Invalid value: "": ` + namePart,
			},
		},
		{
			Name:   "duplicate topology key",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys = []string{zone, zone} },
			Want:   []string{`spec.drivers[0]: Duplicate value: "topology.kubernetes.io/zone"`},
		},
		{
			Name:   "topology key not a qualified name",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys = []string{"-zone"} },
			Want:   []string{`spec.drivers[0]: Invalid value: "-zone": ` + namePart},
		},
	}
	store := registrytest.REST(t, NewStorage, "csinodes")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.Messages, validNode, tests)
}

// TestValidateUpdate: upstream's ValidateCSINodeUpdate: a driver kept by
// name is immutable but for its allocatable count.
func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Mutation[*storagev1.CSINode]{
		{Name: "unchanged", Mutate: func(*storagev1.CSINode) {}, Want: []string{}},
		{Name: "allocatable count changes", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](39) }, Want: []string{}},
		{Name: "allocatable removed", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable = nil }, Want: []string{}},
		{Name: "driver removed", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers = nil }, Want: []string{}},
		{
			Name: "driver added",
			Mutate: func(n *storagev1.CSINode) {
				n.Spec.Drivers = append(n.Spec.Drivers, storagev1.CSINodeDriver{Name: "pd.csi.storage.gke.io", NodeID: "n1"})
			},
			Want: []string{},
		},
		{
			Name:   "node ID changed",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = "i-4567" },
			Want: []string{
				`spec.drivers: Invalid value: {"Name":"ebs.csi.aws.com","NodeID":"i-4567","TopologyKeys":["topology.kubernetes.io/zone"],"Allocatable":null}: field is immutable`,
			},
		},
		{
			Name:   "topology keys changed",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].TopologyKeys = nil },
			Want:   []string{`spec.drivers: Invalid value: {"Name":"ebs.csi.aws.com","NodeID":"i-0123","TopologyKeys":null,"Allocatable":null}: field is immutable`},
		},
		{
			Name:   "update also validates",
			Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](-1) },
			Want:   []string{"spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"},
		},
	}
	store := registrytest.REST(t, NewStorage, "csinodes")
	registrytest.ValidateUpdateMutations(t, store.UpdateStrategy, registrytest.Messages, validNode, tests)
}

func healthy() storagev1.CSINodeStatus {
	return storagev1.CSINodeStatus{StorageHealth: []storagev1.StorageHealth{{
		Name: "ebs.csi.aws.com",
		HealthConditions: []storagev1.StorageHealthCondition{{
			Status: storagev1.StorageDegraded, Reason: "SlowDisk", Message: "latency above 1s",
		}},
	}}}
}

// TestValidateStatusUpdate: upstream's ValidateCSINodeStatusUpdate, the
// status alone: a status update does not check the spec.
func TestValidateStatusUpdate(t *testing.T) {
	condition := func(mutate func(*storagev1.StorageHealthCondition)) func(*storagev1.CSINode) {
		return func(n *storagev1.CSINode) { mutate(&n.Status.StorageHealth[0].HealthConditions[0]) }
	}
	const p = "status.storageHealth[0]"
	tests := []registrytest.Mutation[*storagev1.CSINode]{
		{Name: "valid", Mutate: func(*storagev1.CSINode) {}, Want: []string{}},
		{Name: "invalid spec is not checked", Mutate: func(n *storagev1.CSINode) { n.Spec.Drivers[0].NodeID = "" }, Want: []string{}},
		{
			Name: "duplicate driver",
			Mutate: func(n *storagev1.CSINode) {
				n.Status.StorageHealth = append(n.Status.StorageHealth, n.Status.StorageHealth[0])
			},
			Want: []string{`status.storageHealth[1]: Duplicate value: "ebs.csi.aws.com"`},
		},
		{Name: "no driver name", Mutate: func(n *storagev1.CSINode) { n.Status.StorageHealth[0].Name = "" }, Want: []string{p + ".name: Required value"}},
		{Name: "bad driver name", Mutate: func(n *storagev1.CSINode) { n.Status.StorageHealth[0].Name = "a_b" }, Want: []string{p + `.name: Invalid value: "a_b": ` + dnsSubdomain}},
		{
			Name: "too many conditions",
			Mutate: func(n *storagev1.CSINode) {
				c := n.Status.StorageHealth[0].HealthConditions[0]
				c.Status = "Bad" // not checked: too many
				for range 16 {
					n.Status.StorageHealth[0].HealthConditions = append(n.Status.StorageHealth[0].HealthConditions, c)
				}
			},
			Want: []string{p + ".healthConditions: Too many: 17: must have at most 16 items"},
		},
		{
			Name:   "unknown status",
			Mutate: condition(func(c *storagev1.StorageHealthCondition) { c.Status = "Broken" }),
			Want:   []string{p + `.healthConditions[0].status: Unsupported value: "Broken": supported values: "StorageDegraded", "StorageUnreachable"`},
		},
		{Name: "no reason", Mutate: condition(func(c *storagev1.StorageHealthCondition) { c.Reason = "" }), Want: []string{p + ".healthConditions[0].reason: Required value"}},
		{
			Name:   "reason not CamelCase",
			Mutate: condition(func(c *storagev1.StorageHealthCondition) { c.Reason = "slow disk" }),
			Want: []string{p + `.healthConditions[0].reason: Invalid value: "slow disk": a condition reason must start with alphabetic character, ` +
				"optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' " +
				"(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"},
		},
		{
			Name: "reason and message too long",
			Mutate: condition(func(c *storagev1.StorageHealthCondition) {
				c.Reason, c.Message = strings.Repeat("R", 257), strings.Repeat("m", 1025)
			}),
			Want: []string{p + ".healthConditions[0].reason: Too long: may not be more than 256 bytes", p + ".healthConditions[0].message: Too long: may not be more than 1024 bytes"},
		},
		{
			Name: "unknown access and volume modes",
			Mutate: condition(func(c *storagev1.StorageHealthCondition) {
				c.AccessMode, c.VolumeMode = ptr.To[corev1.PersistentVolumeAccessMode]("ReadSometimes"), ptr.To[corev1.PersistentVolumeMode]("Tape")
			}),
			Want: []string{
				p + `.healthConditions[0].accessMode: Unsupported value: "ReadSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
				p + `.healthConditions[0].volumeMode: Unsupported value: "Tape": supported values: "Filesystem", "Block"`,
			},
		},
	}
	_, status := strategies()
	old := validNode()
	old.Status = healthy()
	registrytest.RunMutations(t, "status ValidateUpdate errors", func() *storagev1.CSINode { return old }, tests, func(obj *storagev1.CSINode) []string {
		return registrytest.Messages(status.ValidateUpdate(context.Background(), obj, old))
	})
}

func TestPrepareForCreate(t *testing.T) {
	n := validNode()
	n.Status = healthy()
	registrytest.REST(t, NewStorage, "csinodes").CreateStrategy.PrepareForCreate(context.Background(), n)
	if diff := cmp.Diff(storagev1.CSINodeStatus{}, n.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(validNode().Spec, n.Spec); diff != "" {
		t.Errorf("spec after PrepareForCreate (-want +got):\n%s", diff)
	}
	if n.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0 (upstream sets none)", n.Generation)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// csinodes and of csinodes/status.
func TestUpdateThroughStores(t *testing.T) {
	newSpec := registrytest.Modified(validNode(), func(n *storagev1.CSINode) { n.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](39) }).Spec
	reported := storagev1.CSINodeStatus{StorageHealth: []storagev1.StorageHealth{{Name: "ebs.csi.aws.com"}}}
	tests := []struct {
		name       string
		status     bool
		oldStatus  storagev1.CSINodeStatus
		wantSpec   storagev1.CSINodeSpec
		wantStatus storagev1.CSINodeStatus
		wantLabels map[string]string
	}{
		{name: "main: spec and labels change, status kept", oldStatus: healthy(), wantSpec: newSpec, wantStatus: healthy(), wantLabels: map[string]string{"new": "label"}},
		{
			name: "status: status changes; spec and labels kept", status: true, oldStatus: healthy(),
			wantSpec: validNode().Spec, wantStatus: reported, wantLabels: map[string]string{"old": "label"},
		},
		// CSIVolumeHealth is off: storage health is written only where there is some.
		{name: "status: new storage health dropped", status: true, wantSpec: validNode().Spec, wantStatus: storagev1.CSINodeStatus{}, wantLabels: map[string]string{"old": "label"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validNode()
			old.Labels, old.Status = map[string]string{"old": "label"}, tt.oldStatus
			ctx, storages, update := registrytest.Seeded(t, NewStorage, "csinodes", old)
			update.Spec = *newSpec.DeepCopy()
			update.Labels = map[string]string{"new": "label"}
			update.Status = *reported.DeepCopy()
			out, err := registrytest.Update(ctx, storages, "csinodes", tt.status, "node-1", update)
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*storagev1.CSINode)
			if diff := cmp.Diff(tt.wantSpec, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "csinodes"), validNode(), fields.Set{"metadata.name": "node-1"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "one driver", Obj: validNode(), Want: []any{"node-1", int64(1), "<unknown>"}},
		{Name: "no drivers", Obj: &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "node-2"}}, Want: []any{"node-2", int64(0), "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "csinodes")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.Obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			want := []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
				registry.AgeColumn,
			}
			if diff := cmp.Diff(want, table.ColumnDefinitions); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.Want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
