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

package servicecidr

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newCIDR(cidrs ...string) *networkingv1.ServiceCIDR {
	return &networkingv1.ServiceCIDR{
		ObjectMeta: metav1.ObjectMeta{Name: "extra", UID: "uid-1", ResourceVersion: "1"},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: cidrs},
	}
}

func readyStatus() networkingv1.ServiceCIDRStatus {
	return networkingv1.ServiceCIDRStatus{Conditions: []metav1.Condition{{
		Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue, Message: "Kubernetes Service CIDR is ready",
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
	}}}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "servicecidrs", "servicecidrs", "servicecidrs/status")
	status, ok := storages["servicecidrs/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "servicecidrs/status", storages["servicecidrs/status"])
	}
	store := registrytest.REST(t, NewStorage, "servicecidrs")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: networkingv1.Resource("servicecidrs"), Singular: "servicecidr"})
	// Upstream's reset fields: status on the resource; metadata and spec on /status.
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths("networking.k8s.io/v1", "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths("networking.k8s.io/v1", "metadata", "spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

const (
	invalidCIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
	oneOfEach   = "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
)

// TestValidate: upstream's ValidateServiceCIDR, with its messages and paths.
func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*networkingv1.ServiceCIDR]{
		{Name: "single stack", Obj: newCIDR("10.0.0.0/24"), Want: []string{}},
		{Name: "IPv6 single stack", Obj: newCIDR("fd00:10:96::/112"), Want: []string{}},
		{Name: "dual stack", Obj: newCIDR("10.0.0.0/24", "fd00:10:96::/112"), Want: []string{}},
		{Name: "dual stack, IPv6 first", Obj: newCIDR("fd00:10:96::/112", "10.0.0.0/24"), Want: []string{}},
		{Name: "no CIDRs", Obj: newCIDR(), Want: []string{"spec.cidrs: Required value: at least one CIDR required"}},
		{
			Name: "three CIDRs", Obj: newCIDR("10.0.0.0/24", "10.1.0.0/24", "fd00::/64"),
			Want: []string{`spec.cidrs: Invalid value: {"CIDRs":["10.0.0.0/24","10.1.0.0/24","fd00::/64"]}: may only hold up to 2 values`},
		},
		{Name: "not a CIDR", Obj: newCIDR("bad cidr"), Want: []string{`spec.cidrs[0]: Invalid value: "bad cidr": ` + invalidCIDR}},
		{Name: "an address", Obj: newCIDR("10.0.0.1"), Want: []string{`spec.cidrs[0]: Invalid value: "10.0.0.1": ` + invalidCIDR}},
		{
			Name: "bits beyond the prefix", Obj: newCIDR("10.0.0.0/24", "10.0.0.1/24"),
			Want: []string{
				`spec.cidrs[1]: Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length`,
				`spec.cidrs: Invalid value: ["10.0.0.0/24","10.0.0.1/24"]: ` + oneOfEach,
			},
		},
		{Name: "leading zeros", Obj: newCIDR("010.0.0.0/24"), Want: []string{`spec.cidrs[0]: Invalid value: "010.0.0.0/24": must not have leading 0s in IP or prefix length`}},
		{Name: "not canonical", Obj: newCIDR("fd00:0::/64"), Want: []string{`spec.cidrs[0]: Invalid value: "fd00:0::/64": must be in canonical form ("fd00::/64")`}},
		{
			Name: "two IPv4", Obj: newCIDR("10.0.0.0/24", "10.1.0.0/24"),
			Want: []string{`spec.cidrs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: ` + oneOfEach},
		},
		{
			Name: "two IPv6", Obj: newCIDR("fd00::/64", "fd01::/64"),
			Want: []string{`spec.cidrs: Invalid value: ["fd00::/64","fd01::/64"]: ` + oneOfEach},
		},
		{
			Name: "no name", Obj: func() *networkingv1.ServiceCIDR { c := newCIDR("10.0.0.0/24"); c.Name = ""; return c }(),
			Want: []string{"metadata.name: Required value: name or generateName is required"},
		},
		{
			Name: "a namespace", Obj: func() *networkingv1.ServiceCIDR { c := newCIDR("10.0.0.0/24"); c.Namespace = "default"; return c }(),
			Want: []string{"metadata.namespace: Forbidden: not allowed on this type"},
		},
	}
	store := registrytest.REST(t, NewStorage, "servicecidrs")
	registrytest.ValidateChanges(t, store.CreateStrategy, registrytest.Messages, tests)
}

// TestValidateName: a ServiceCIDR's name is a DNS subdomain, as upstream's.
func TestValidateName(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "servicecidrs")
	for name, want := range map[string][]string{
		"kubernetes":        {},
		"extra.example.com": {},
		"Bad_Name":          {"metadata.name: Invalid value"},
		"10.0.0.0/24":       {"metadata.name: Invalid value"},
	} {
		c := newCIDR("10.0.0.0/24")
		c.Name = name
		if diff := cmp.Diff(want, registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), c))); diff != "" {
			t.Errorf("name %q: errors (-want +got):\n%s", name, diff)
		}
	}
}

// TestValidateUpdate: upstream's ValidateServiceCIDRUpdate: the CIDRs are
// immutable, but a single one may get a second of the other family.
func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name     string
		old, new []string
		want     []string
	}{
		{name: "unchanged", old: []string{"10.0.0.0/24"}, new: []string{"10.0.0.0/24"}, want: []string{}},
		{name: "changed", old: []string{"10.0.0.0/24"}, new: []string{"10.1.0.0/24"}, want: []string{`spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable`}},
		// As upstream: an unchanged count is checked for immutability only.
		{name: "changed to no CIDR", old: []string{"10.0.0.0/24"}, new: []string{"bad cidr"}, want: []string{`spec.cidrs[0]: Invalid value: "bad cidr": field is immutable`}},
		{
			name: "dual stack, second changed", old: []string{"10.0.0.0/24", "fd00::/64"}, new: []string{"10.0.0.0/24", "fd01::/64"},
			want: []string{`spec.cidrs[1]: Invalid value: "fd01::/64": field is immutable`},
		},
		{name: "the other family added", old: []string{"10.0.0.0/24"}, new: []string{"10.0.0.0/24", "fd00::/64"}, want: []string{}},
		{
			name: "the same family added", old: []string{"10.0.0.0/24"}, new: []string{"10.0.0.0/24", "10.1.0.0/24"},
			want: []string{`spec.cidrs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: ` + oneOfEach},
		},
		{
			name: "an invalid CIDR added", old: []string{"10.0.0.0/24"}, new: []string{"10.0.0.0/24", "fd00::1/64"},
			want: []string{`spec.cidrs[1]: Invalid value: "fd00::1/64": must not have bits set beyond the prefix length`},
		},
		{
			name: "the first changed as the second is added", old: []string{"10.0.0.0/24"}, new: []string{"10.1.0.0/24", "fd00::/64"},
			want: []string{`spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable`},
		},
		{
			name: "one removed", old: []string{"10.0.0.0/24", "fd00::/64"}, new: []string{"10.0.0.0/24"},
			want: []string{`spec.cidrs: Invalid value: ["10.0.0.0/24"]: field is immutable`},
		},
		{name: "all removed", old: []string{"10.0.0.0/24"}, new: nil, want: []string{`spec.cidrs: Invalid value: null: field is immutable`}},
	}
	store := registrytest.REST(t, NewStorage, "servicecidrs")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := store.UpdateStrategy.ValidateUpdate(context.Background(), newCIDR(tt.new...), newCIDR(tt.old...))
			if diff := cmp.Diff(tt.want, registrytest.Messages(got)); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	c := newCIDR("10.0.0.0/24")
	c.Status = readyStatus()
	registrytest.REST(t, NewStorage, "servicecidrs").CreateStrategy.PrepareForCreate(context.Background(), c)
	if diff := cmp.Diff(networkingv1.ServiceCIDRStatus{}, c.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}}, c.Spec); diff != "" {
		t.Errorf("spec after PrepareForCreate (-want +got):\n%s", diff)
	}
	if c.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0 (upstream does not count ServiceCIDR changes)", c.Generation)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// servicecidrs and of servicecidrs/status.
func TestUpdateThroughStores(t *testing.T) {
	dualStack := networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24", "fd00::/64"}}
	tests := []struct {
		name       string
		status     bool
		wantSpec   networkingv1.ServiceCIDRSpec
		wantStatus networkingv1.ServiceCIDRStatus
		wantLabels map[string]string
		wantFinal  []string
	}{
		{
			name:     "main: spec and metadata change, status kept",
			wantSpec: dualStack, wantLabels: map[string]string{"new": "label"}, wantFinal: []string{"example.com/new"},
		},
		{
			name: "status: status changes; spec, labels and finalizers kept", status: true,
			wantSpec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}}, wantStatus: readyStatus(),
			wantLabels: map[string]string{"old": "label"}, wantFinal: []string{"example.com/old"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := newCIDR("10.0.0.0/24")
			old.Labels, old.Finalizers = map[string]string{"old": "label"}, []string{"example.com/old"}
			ctx, storages, current := registrytest.Seeded(t, NewStorage, "servicecidrs", old)
			update := current.DeepCopy()
			update.Spec = dualStack
			update.Status = readyStatus()
			update.Labels, update.Finalizers = map[string]string{"new": "label"}, []string{"example.com/new"}
			out, err := registrytest.Update(ctx, storages, "servicecidrs", tt.status, "extra", update)
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*networkingv1.ServiceCIDR)
			if diff := cmp.Diff(tt.wantSpec, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFinal, got.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateRefusesImmutableChange: an update changing a CIDR is a 422
// naming the field, through the store.
func TestUpdateRefusesImmutableChange(t *testing.T) {
	ctx, storages, current := registrytest.Seeded(t, NewStorage, "servicecidrs", newCIDR("10.0.0.0/24"))
	store := storages["servicecidrs"].(*registry.REST)
	update := current.DeepCopy()
	update.Spec.CIDRs = []string{"10.1.0.0/24"}
	_, _, err := store.Update(ctx, "extra", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("Update: got error %v, want Invalid", err)
	}
	want := `ServiceCIDR.networking.k8s.io "extra" is invalid: spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable`
	if err.Error() != want {
		t.Errorf("Update: got %q, want %q", err.Error(), want)
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "servicecidrs")
	registrytest.CheckFields(t, store, newCIDR("10.0.0.0/24"), fields.Set{"metadata.name": "extra"})
}

func TestTable(t *testing.T) {
	created := metav1.NewTime(time.Now().Add(-90 * time.Second))
	tests := []registrytest.Row{
		{Name: "single stack, no creation time", Obj: newCIDR("10.0.0.0/24"), Want: []any{"extra", "10.0.0.0/24", "<unknown>"}},
		{
			Name: "dual stack",
			Obj: func() *networkingv1.ServiceCIDR {
				c := newCIDR("10.0.0.0/24", "fd00::/64")
				c.CreationTimestamp = created
				return c
			}(),
			Want: []any{"extra", "10.0.0.0/24,fd00::/64", "90s"},
		},
	}
	store := registrytest.REST(t, NewStorage, "servicecidrs")
	registrytest.CheckTable(t, store, []string{"Name", "CIDRs", "Age"}, tests...)
}
