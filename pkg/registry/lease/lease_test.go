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

package lease

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newLease(spec coordinationv1.LeaseSpec) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler", Namespace: "kube-system", UID: "uid-1", ResourceVersion: "1"},
		Spec:       spec,
	}
}

func TestStorage(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "leases")
	if got, want := rest.DefaultQualifiedResource, coordinationv1.Resource("leases"); got != want {
		t.Errorf("resource: got %v, want %v", got, want)
	}
	if !rest.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	// Leader election PUTs the lease it wants to hold.
	if !rest.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got false, want true")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want []string
	}{
		{name: "empty spec", spec: coordinationv1.LeaseSpec{}, want: []string{}},
		{
			name: "held lease",
			spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseDurationSeconds: ptr.To[int32](15), LeaseTransitions: ptr.To[int32](0)},
			want: []string{},
		},
		{name: "zero duration", spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](0)}, want: []string{"spec.leaseDurationSeconds: Invalid value"}},
		{name: "negative duration", spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](-5)}, want: []string{"spec.leaseDurationSeconds: Invalid value"}},
		{name: "negative transitions", spec: coordinationv1.LeaseSpec{LeaseTransitions: ptr.To[int32](-1)}, want: []string{"spec.leaseTransitions: Invalid value"}},
		{
			name: "both invalid",
			spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](0), LeaseTransitions: ptr.To[int32](-1)},
			want: []string{"spec.leaseDurationSeconds: Invalid value", "spec.leaseTransitions: Invalid value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "leases")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(rest.CreateStrategy.Validate(context.Background(), newLease(tt.spec)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			// Without an update rule of its own the create rules apply on update.
			got = registrytest.ErrorPaths(rest.UpdateStrategy.ValidateUpdate(context.Background(), newLease(tt.spec), newLease(coordinationv1.LeaseSpec{})))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareKeepsSpec(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "leases")
	lease := newLease(coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1"), LeaseTransitions: ptr.To[int32](3)})
	want := lease.DeepCopy()
	rest.CreateStrategy.PrepareForCreate(context.Background(), lease)
	rest.UpdateStrategy.PrepareForUpdate(context.Background(), lease, newLease(coordinationv1.LeaseSpec{}))
	if diff := cmp.Diff(want, lease); diff != "" {
		t.Errorf("lease after PrepareForCreate/PrepareForUpdate (-want +got):\n%s", diff)
	}
}

// TestPrepareDropsCoordinationFields: with CoordinatedLeaderElection off,
// strategy and preferredHolder are dropped unless the old lease has them.
func TestPrepareDropsCoordinationFields(t *testing.T) {
	coordinated := coordinationv1.LeaseSpec{Strategy: ptr.To(coordinationv1.OldestEmulationVersion), PreferredHolder: ptr.To("node-2")}
	tests := []struct {
		name string
		gate bool
		old  *coordinationv1.LeaseSpec
		want coordinationv1.LeaseSpec
	}{
		{name: "create, gate off", want: coordinationv1.LeaseSpec{}},
		{name: "create, gate on", gate: true, want: coordinated},
		{name: "update of a lease without them, gate off", old: &coordinationv1.LeaseSpec{}, want: coordinationv1.LeaseSpec{}},
		{name: "update of a lease with them, gate off", old: &coordinated, want: coordinated},
	}
	rest := registrytest.REST(t, NewStorage, "leases")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, genericfeatures.CoordinatedLeaderElection, tt.gate)
			lease := newLease(*coordinated.DeepCopy())
			if tt.old == nil {
				rest.CreateStrategy.PrepareForCreate(context.Background(), lease)
			} else {
				rest.UpdateStrategy.PrepareForUpdate(context.Background(), lease, newLease(*tt.old))
			}
			if diff := cmp.Diff(tt.want, lease.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "leases")
	registrytest.CheckFields(t, rest, newLease(coordinationv1.LeaseSpec{}), fields.Set{"metadata.name": "kube-scheduler", "metadata.namespace": "kube-system"})
}

func TestTable(t *testing.T) {
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want []any
	}{
		{name: "held", spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1_abc")}, want: []any{"kube-scheduler", "node-1_abc", "<unknown>"}},
		{name: "free", spec: coordinationv1.LeaseSpec{}, want: []any{"kube-scheduler", "", "<unknown>"}},
	}
	rest := registrytest.REST(t, NewStorage, "leases")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := rest.ConvertToTable(context.Background(), newLease(tt.spec), nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Holder", "Age"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
