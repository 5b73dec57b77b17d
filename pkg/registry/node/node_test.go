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

package node

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validNode returns a registered, ready node that passes validation.
func validNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "uid-1", ResourceVersion: "1", Labels: map[string]string{"kubernetes.io/hostname": "node-1"}},
		Spec: corev1.NodeSpec{
			PodCIDR:  "10.244.1.0/24",
			PodCIDRs: []string{"10.244.1.0/24"},
			Taints:   []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}},
		},
		Status: corev1.NodeStatus{
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.10"}, {Type: corev1.NodeHostName, Address: "node-1"}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian GNU/Linux 13", KernelVersion: "6.12.0", ContainerRuntimeVersion: "containerd://2.1.0"},
		},
	}
}

func TestStorage(t *testing.T) {
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("nodes"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	status, ok := storages["nodes/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "nodes/status", storages["nodes/status"])
	}
	store := registrytest.REST(t, NewStorage, "nodes")
	if store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got true, want false")
	}
	if diff := cmp.Diff([]string{"no"}, store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
	registrytest.CheckSpecAndStatus(t, store, status, "v1")
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "nodes", "nodes", "nodes/status")
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.Node]{
		{Name: "valid", Obj: validNode(), Want: []string{}},
		{
			Name: "dual-stack podCIDRs",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "fd00:10:244:1::/64"} }),
			Want: []string{},
		},
		{
			Name: "name that is no DNS subdomain",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Name = "Node_1" }),
			Want: []string{"metadata.name: Invalid value"},
		},
		{
			Name: "invalid podCIDR",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0"} }),
			Want: []string{"spec.podCIDRs[0]: Invalid value"},
		},
		{
			Name: "two CIDRs of one family",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "10.245.1.0/24"} }),
			Want: []string{"spec.podCIDRs: Invalid value"},
		},
		{
			Name: "three CIDRs",
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Spec.PodCIDRs = []string{"10.244.1.0/24", "fd00::/64", "fd01::/64"}
			}),
			Want: []string{"spec.podCIDRs: Invalid value"},
		},
		{
			Name: "duplicate CIDR",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "10.244.1.0/24"} }),
			Want: []string{"spec.podCIDRs: Invalid value"}, // not dual stack: upstream has no duplicate check
		},
		{
			Name: "one invalid CIDR of two",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "nope"} }),
			// Upstream's dual-stack check runs on the invalid CIDR too.
			Want: []string{"spec.podCIDRs: Internal error", "spec.podCIDRs: Invalid value", "spec.podCIDRs[1]: Invalid value"},
		},
		{
			Name: "taint without key or effect (at upstream's metadata.taints path)",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Value: "x"}} }),
			// An empty qualified name is both empty and malformed, as upstream reports it.
			Want: []string{"metadata.taints[0].effect: Required value", "metadata.taints[0].key: Invalid value", "metadata.taints[0].key: Invalid value"},
		},
		{
			Name: "taint with an unknown effect and a bad value",
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "example.com/gpu", Value: "a b", Effect: "NoAdmit"}}
			}),
			Want: []string{"metadata.taints[0].effect: Unsupported value", "metadata.taints[0].value: Invalid value"},
		},
		{
			Name: "taint key that is no qualified name",
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "a/b/c", Effect: corev1.TaintEffectNoExecute}}
			}),
			Want: []string{"metadata.taints[0].key: Invalid value"},
		},
		{
			Name: "same key with two effects",
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}, {Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}
			}),
			Want: []string{},
		},
		{
			Name: "duplicate key and effect",
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "k", Value: "1", Effect: corev1.TaintEffectNoSchedule}, {Key: "k", Value: "2", Effect: corev1.TaintEffectNoSchedule}}
			}),
			Want: []string{"metadata.taints[1]: Duplicate value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "nodes").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Change[*corev1.Node]{
		{
			Name: "taints and unschedulable may change",
			Old:  validNode(),
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Spec.Unschedulable = true
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule})
			}),
			Want: []string{},
		},
		{
			Name: "podCIDRs may be set once",
			Old:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = "", nil }),
			Obj:  validNode(),
			Want: []string{},
		},
		{
			Name: "podCIDRs may not change",
			Old:  validNode(),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = []string{"10.244.2.0/24"} }),
			Want: []string{"spec.podCIDRs: Forbidden"},
		},
		{
			Name: "podCIDRs may not gain a family",
			Old:  validNode(),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = append(n.Spec.PodCIDRs, "fd00::/64") }),
			Want: []string{"spec.podCIDRs: Forbidden"},
		},
		{
			Name: "providerID may be set once",
			Old:  validNode(),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.ProviderID = "aws:///eu-west-1a/i-1" }),
			Want: []string{},
		},
		{
			Name: "providerID may not change",
			Old:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.ProviderID = "aws:///eu-west-1a/i-1" }),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.ProviderID = "aws:///eu-west-1a/i-2" }),
			Want: []string{"spec.providerID: Invalid value"},
		},
		{
			Name: "providerID may not be cleared",
			Old:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.ProviderID = "aws:///eu-west-1a/i-1" }),
			Obj:  validNode(),
			Want: []string{"spec.providerID: Invalid value"},
		},
		{
			Name: "podCIDRs may not change from an old node's podCIDR",
			Old:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDRs = nil }),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.2.0/24", []string{"10.244.2.0/24"} }),
			Want: []string{"spec.podCIDRs: Forbidden"},
		},
		{
			Name: "externalID may not change",
			Old:  validNode(),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.DoNotUseExternalID = "x" }),
			Want: []string{"spec.externalID: Forbidden"},
		},
		{
			Name: "taints are validated on update",
			Old:  validNode(),
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.Taints[0].Effect = "Evict" }),
			// Twice, as upstream's strategy (ValidateNode, then
			// ValidateNodeUpdate); its generic store drops the repeat.
			Want: []string{"metadata.taints[0].effect: Unsupported value", "metadata.taints[0].effect: Unsupported value"},
		},
		{
			Name: "duplicate addresses",
			Old:  validNode(),
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Status.Addresses = append(n.Status.Addresses, n.Status.Addresses[0])
			}),
			Want: []string{"status.addresses[2]: Duplicate value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "nodes").UpdateStrategy
	registrytest.ValidateUpdateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

// TestPrepareForCreateKeepsStatus: a create keeps the status a kubelet
// registers with, and gets the not-ready taint once, as kube-apiserver's
// TaintNodesByCondition admission plugin gives it.
func TestPrepareForCreateKeepsStatus(t *testing.T) {
	node := validNode()
	want := node.DeepCopy()
	want.Spec.Taints = append(want.Spec.Taints, corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule})
	strategy := registrytest.REST(t, NewStorage, "nodes").CreateStrategy
	strategy.PrepareForCreate(context.Background(), node)
	if diff := cmp.Diff(want, node); diff != "" {
		t.Errorf("node after PrepareForCreate (-want +got):\n%s", diff)
	}
	strategy.PrepareForCreate(context.Background(), node) // a node that has it gets no second one
	if diff := cmp.Diff(want, node); diff != "" {
		t.Errorf("node with the taint after PrepareForCreate (-want +got):\n%s", diff)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// nodes and of nodes/status: each keeps what its endpoint may not change.
func TestUpdateThroughStores(t *testing.T) {
	stored := validNode()
	notReady := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	tests := []struct {
		name              string
		status            bool
		wantUnschedulable bool
		wantConditions    []corev1.NodeCondition
	}{
		{name: "nodes: spec changes, status kept", wantUnschedulable: true, wantConditions: stored.Status.Conditions},
		{name: "nodes/status: status changes, spec kept", status: true, wantUnschedulable: false, wantConditions: notReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "nodes", tt.status, stored, func(n *corev1.Node) {
				n.Spec.Unschedulable = true
				n.Status.Conditions = notReady
			})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			if got.Spec.Unschedulable != tt.wantUnschedulable {
				t.Errorf("unschedulable: got %v, want %v", got.Spec.Unschedulable, tt.wantUnschedulable)
			}
			if diff := cmp.Diff(tt.wantConditions, got.Status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusUpdateValidatesAddresses(t *testing.T) {
	ctx, storages, current := registrytest.Seeded(t, NewStorage, "nodes", validNode())
	update := registrytest.Modified(current, func(n *corev1.Node) { n.Status.Addresses = append(n.Status.Addresses, n.Status.Addresses[1]) })
	_, _, err := storages["nodes/status"].(*registry.StatusREST).Update(ctx, "node-1", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err == nil {
		t.Fatalf("status update with a duplicate address: got no error, want Invalid")
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "nodes")
	node := registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.Unschedulable = true })
	registrytest.CheckFields(t, store, node, fields.Set{"metadata.name": "node-1", "spec.unschedulable": "true"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{
			Name: "ready worker",
			Obj:  validNode(),
			Want: []any{"node-1", "Ready", "<none>", "<unknown>", "v1.37.2", "192.168.0.10", "<none>", "Debian GNU/Linux 13", "6.12.0", "containerd://2.1.0"},
		},
		{
			Name: "not ready, cordoned control plane with roles from both label forms",
			Obj: registrytest.Modified(validNode(), func(n *corev1.Node) {
				n.Labels = map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": "", "kubernetes.io/role": "master", "node-role.kubernetes.io/": ""}
				n.Spec.Unschedulable = true
				n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue}, {Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}
				n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.7"})
			}),
			Want: []any{"node-1", "NotReady,SchedulingDisabled", "control-plane,etcd,master", "<unknown>", "v1.37.2", "192.168.0.10", "203.0.113.7", "Debian GNU/Linux 13", "6.12.0", "containerd://2.1.0"},
		},
		{
			Name: "just registered",
			Obj:  registrytest.Modified(validNode(), func(n *corev1.Node) { n.Status = corev1.NodeStatus{} }),
			Want: []any{"node-1", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "nodes")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.Obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			wantColumns := []string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}
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

// TestPodCIDRAndPodCIDRsStayInStep: podCIDR and podCIDRs are one field, as
// upstream's internal type makes them: a create with either gets both, and
// an update that changes podCIDR alone changes podCIDRs too, which an
// update may not (upstream's 422).
func TestPodCIDRAndPodCIDRsStayInStep(t *testing.T) {
	strategy := registrytest.REST(t, NewStorage, "nodes").UpdateStrategy
	for _, tt := range []struct {
		name      string
		podCIDR   string
		podCIDRs  []string
		wantCIDR  string
		wantCIDRs []string
	}{
		{name: "podCIDR alone", podCIDR: "10.244.0.0/24", wantCIDR: "10.244.0.0/24", wantCIDRs: []string{"10.244.0.0/24"}},
		{name: "podCIDRs alone", podCIDRs: []string{"10.244.0.0/24", "fd00::/64"}, wantCIDR: "10.244.0.0/24", wantCIDRs: []string{"10.244.0.0/24", "fd00::/64"}},
		{name: "podCIDR wins", podCIDR: "10.244.1.0/24", podCIDRs: []string{"10.244.0.0/24", "fd00::/64"}, wantCIDR: "10.244.1.0/24", wantCIDRs: []string{"10.244.1.0/24"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := registrytest.Modified(validNode(), func(n *corev1.Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = tt.podCIDR, tt.podCIDRs })
			strategy.(rest.RESTCreateStrategy).PrepareForCreate(context.Background(), n)
			if n.Spec.PodCIDR != tt.wantCIDR || !slices.Equal(n.Spec.PodCIDRs, tt.wantCIDRs) {
				t.Errorf("got podCIDR %q podCIDRs %v, want %q %v", n.Spec.PodCIDR, n.Spec.PodCIDRs, tt.wantCIDR, tt.wantCIDRs)
			}
		})
	}
	old := validNode()
	update := registrytest.Modified(old, func(n *corev1.Node) { n.Spec.PodCIDR = "10.244.9.0/24" }) // a merge patch of podCIDR
	strategy.PrepareForUpdate(context.Background(), update, old)
	if got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), update, old)); !slices.Equal(got, []string{"spec.podCIDRs: Forbidden"}) {
		t.Errorf("an update of podCIDR alone: got errors %v, want spec.podCIDRs: Forbidden", got)
	}
}
