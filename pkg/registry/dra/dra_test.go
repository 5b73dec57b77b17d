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

package dra

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "resourceclaims", "deviceclasses", "devicetaintrules", "devicetaintrules/status",
		"resourceclaims", "resourceclaims/status", "resourceclaimtemplates", "resourceslices")
	for _, tt := range []struct {
		resource   string
		namespaced bool
		singular   string
		status     bool
	}{
		{"deviceclasses", false, "deviceclass", false},
		{"devicetaintrules", false, "devicetaintrule", true},
		{"resourceclaims", true, "resourceclaim", true},
		{"resourceclaimtemplates", true, "resourceclaimtemplate", false},
		{"resourceslices", false, "resourceslice", false},
	} {
		store := storages[tt.resource].(*registry.REST)
		registrytest.CheckShape(t, store, registrytest.Shape{Resource: resourcev1.Resource(tt.resource), Singular: tt.singular, Namespaced: tt.namespaced})
		// As upstream's stores: all but v1 devicetaintrules answer a DELETE with the object.
		if want := tt.resource != "devicetaintrules"; store.ReturnDeletedObject != want {
			t.Errorf("%s: ReturnDeletedObject %t, want %t", tt.resource, store.ReturnDeletedObject, want)
		}
		if tt.status {
			// As upstream's: a status update keeps the metadata too.
			registrytest.CheckSpecAndStatus(t, store, storages[tt.resource+"/status"].(*registry.StatusREST), groupVersion, "metadata", "spec")
		}
	}
}

func claim(mutate func(*resourcev1.ResourceClaim)) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "ns", ResourceVersion: "1"},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
	if mutate != nil {
		mutate(c)
	}
	return c
}

// TestValidateClaim: upstream's structural rules of a claim's spec, with
// its paths, and its immutability.
func TestValidateClaim(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "resourceclaims")
	for _, tt := range []struct {
		name   string
		mutate func(*resourcev1.ResourceClaim)
		want   []string
	}{
		{name: "valid", want: []string{}},
		{name: "neither exactly nor firstAvailable", mutate: func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Exactly = nil },
			want: []string{"spec.devices.requests[0]: Required value"}},
		{name: "both", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Requests[0].FirstAvailable = []resourcev1.DeviceSubRequest{{Name: "a", DeviceClassName: "x", AllocationMode: resourcev1.DeviceAllocationModeAll}}
		}, want: []string{"spec.devices.requests[0]: Invalid value"}},
		{name: "duplicate request names, bad name", mutate: func(c *resourcev1.ResourceClaim) {
			c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, c.Spec.Devices.Requests[0], resourcev1.DeviceRequest{Name: "Bad_Name", Exactly: c.Spec.Devices.Requests[0].Exactly})
		}, want: []string{"spec.devices.requests[1]: Duplicate value", "spec.devices.requests[2].name: Invalid value"}},
		{name: "no class, bad count, selector without CEL", mutate: func(c *resourcev1.ResourceClaim) {
			e := c.Spec.Devices.Requests[0].Exactly
			e.DeviceClassName, e.Count, e.Selectors = "", 0, []resourcev1.DeviceSelector{{}}
		}, want: []string{"spec.devices.requests[0].exactly.count: Invalid value", "spec.devices.requests[0].exactly.deviceClassName: Required value",
			"spec.devices.requests[0].exactly.selectors[0].cel: Required value"}},
		{name: "count with All, bad toleration", mutate: func(c *resourcev1.ResourceClaim) {
			e := c.Spec.Devices.Requests[0].Exactly
			e.AllocationMode, e.Count = resourcev1.DeviceAllocationModeAll, 2
			e.Tolerations = []resourcev1.DeviceToleration{{Key: "k", Operator: resourcev1.DeviceTolerationOpExists, Value: "v", Effect: "Sometimes"}}
		}, want: []string{"spec.devices.requests[0].exactly.count: Invalid value", "spec.devices.requests[0].exactly.tolerations[0].effect: Unsupported value",
			"spec.devices.requests[0].exactly.tolerations[0].value: Invalid value"}},
	} {
		got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), claim(tt.mutate)))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s", tt.name, diff)
		}
	}
	changed := claim(func(c *resourcev1.ResourceClaim) { c.Spec.Devices.Requests[0].Exactly.Count = 2 })
	if got := registrytest.ErrorPaths(registrytest.ValidateUpdate(store.UpdateStrategy, changed, claim(nil))); !cmp.Equal(got, []string{"spec: Invalid value"}) {
		t.Errorf("a changed spec: errors %v, want spec immutable", got)
	}
}

// TestClaimStatus: the status subresource keeps the spec and checks
// upstream's invariants.
func TestClaimStatus(t *testing.T) {
	allocated := func(c *resourcev1.ResourceClaim) {
		c.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: "p", Device: "d0"}}}}
	}
	consumer := resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "p", UID: "u1"}
	for _, tt := range []struct {
		name     string
		old, obj *resourcev1.ResourceClaim
		want     []string // nil: accepted
	}{
		{name: "allocate and reserve", old: claim(nil), obj: claim(func(c *resourcev1.ResourceClaim) {
			allocated(c)
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{consumer}
			c.Spec.Devices.Requests[0].Exactly.Count = 5                                    // kept as it was
			c.Labels, c.Finalizers = map[string]string{"a": "b"}, []string{"example.com/f"} // kept as they were
		})},
		{name: "reserved without allocation", old: claim(nil), obj: claim(func(c *resourcev1.ResourceClaim) {
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{consumer, consumer, {}}
		}), want: []string{"status.reservedFor: FieldValueForbidden", "status.reservedFor[1]: FieldValueDuplicate", "status.reservedFor[2].name: FieldValueRequired",
			"status.reservedFor[2].resource: FieldValueRequired", "status.reservedFor[2].uid: FieldValueRequired"}},
		{name: "allocation changed", old: claim(allocated), obj: claim(func(c *resourcev1.ResourceClaim) {
			allocated(c)
			c.Status.Allocation.Devices.Results[0].Device = "d1"
		}), want: []string{"status.allocation: FieldValueInvalid"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, storages, _ := registrytest.Seeded(t, NewStorage, "resourceclaims", tt.old)
			out, err := registrytest.Update(ctx, storages, "resourceclaims", true, "gpu", tt.obj)
			if registrytest.CheckInvalid(t, err, tt.want) {
				return
			}
			got := out.(*resourcev1.ResourceClaim)
			if diff := cmp.Diff(tt.obj.Status, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.old.Spec, got.Spec); diff != "" {
				t.Errorf("spec changed by a status update (-want +got):\n%s", diff)
			}
			if got.Labels != nil || got.Finalizers != nil {
				t.Errorf("labels %v, finalizers %v set by a status update, want none, as before", got.Labels, got.Finalizers)
			}
		})
	}
}

// TestSlices: a slice's rules, immutable fields, generation and field
// selectors.
func TestSlices(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "resourceslices")
	slice := func(mutate func(*resourcev1.ResourceSlice)) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "node-1-gpu", ResourceVersion: "1", Generation: 1},
			Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: ptr.To("node-1"),
				Pool:    resourcev1.ResourcePool{Name: "node-1", ResourceSliceCount: 1},
				Devices: []resourcev1.Device{{Name: "gpu-0"}}}}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	for _, tt := range []struct {
		name   string
		mutate func(*resourcev1.ResourceSlice)
		want   []string
	}{
		{name: "valid", want: []string{}},
		{name: "no node selection", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = nil }, want: []string{"spec: Required value"}},
		{name: "two node selections", mutate: func(s *resourcev1.ResourceSlice) { s.Spec.AllNodes = ptr.To(true) }, want: []string{"spec: Invalid value"}},
		{name: "bad driver, no pool, duplicate device", mutate: func(s *resourcev1.ResourceSlice) {
			s.Spec.Driver, s.Spec.Pool = "", resourcev1.ResourcePool{}
			s.Spec.Devices = append(s.Spec.Devices, s.Spec.Devices[0])
		}, want: []string{"spec.devices[1]: Duplicate value", "spec.driver: Required value", "spec.pool.name: Required value", "spec.pool.resourceSliceCount: Invalid value"}},
	} {
		got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), slice(tt.mutate)))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s", tt.name, diff)
		}
	}
	moved := slice(func(s *resourcev1.ResourceSlice) { s.Spec.NodeName, s.Spec.Pool.Name = ptr.To("node-2"), "node-2" })
	if got := registrytest.ErrorPaths(registrytest.ValidateUpdate(store.UpdateStrategy, moved, slice(nil))); !cmp.Equal(got, []string{"spec.nodeName: Invalid value", "spec.pool.name: Invalid value"}) {
		t.Errorf("a moved slice: errors %v, want node and pool immutable", got)
	}
	grown := slice(func(s *resourcev1.ResourceSlice) {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: "gpu-1"})
	})
	store.UpdateStrategy.PrepareForUpdate(context.Background(), grown, slice(nil))
	if grown.Generation != 2 {
		t.Errorf("generation after a spec change: %d, want 2", grown.Generation)
	}
	registrytest.CheckFields(t, store, slice(nil), fields.Set{"metadata.name": "node-1-gpu", "spec.nodeName": "node-1", "spec.driver": "gpu.example.com", "spec.pool.name": "node-1"})
	upper := slice(func(s *resourcev1.ResourceSlice) { s.Spec.Driver = "GPU.example.com" })
	if errs := store.CreateStrategy.Validate(context.Background(), upper); len(errs) > 0 {
		t.Errorf("an uppercase driver: errors %v, want none (as upstream)", errs)
	}
	const warning = `spec.driver: driver names should be lowercase; "GPU.example.com" contains uppercase characters`
	registrytest.CheckWarnings(t, store, []registrytest.WarningCase{
		{Name: "lowercase", Obj: slice(nil)},
		{Name: "uppercase on create", Obj: upper, Want: []string{warning}},
		{Name: "uppercase on update", Obj: upper, Old: slice(nil), Want: []string{warning}},
	})
}

// TestTaintRules: a changed effect is stamped with the time, and the
// taint's rules hold.
func TestTaintRules(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "devicetaintrules")
	long := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	rule := func(effect resourcev1.DeviceTaintEffect) *resourcev1.DeviceTaintRule {
		return &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "broken", ResourceVersion: "1", Generation: 1},
			Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "example.com/broken", Effect: effect, TimeAdded: &long}}}
	}
	evict := rule(resourcev1.DeviceTaintEffectNoExecute)
	store.UpdateStrategy.PrepareForUpdate(context.Background(), evict, rule(resourcev1.DeviceTaintEffectNoSchedule))
	if !evict.Spec.Taint.TimeAdded.After(long.Time) || evict.Generation != 2 {
		t.Errorf("after a new effect: timeAdded %v (was %v), generation %d; want later, 2", evict.Spec.Taint.TimeAdded, long, evict.Generation)
	}
	bad := rule("Sometimes")
	bad.Spec.Taint.Key = ""
	got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), bad))
	// An empty key is both empty and not a name, as upstream reports it.
	if want := []string{"spec.taint.effect: Unsupported value", "spec.taint.key: Invalid value", "spec.taint.key: Invalid value"}; !cmp.Equal(got, want) {
		t.Errorf("errors %v, want %v", got, want)
	}
}

// TestTables: the tables are upstream's printers' columns and cells.
func TestTables(t *testing.T) {
	now := metav1.Now()
	for _, tt := range []struct {
		resource string
		obj      runtime.Object
		want     []any
	}{
		{"resourceclaims", claim(nil), []any{"gpu", "pending", "<unknown>"}},
		{"resourceclaims", claim(func(c *resourcev1.ResourceClaim) {
			c.DeletionTimestamp, c.Status.Allocation = &now, &resourcev1.AllocationResult{}
			c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Name: "p"}}
		}), []any{"gpu", "deleted,allocated,reserved", "<unknown>"}},
		{"resourceslices", &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{Driver: "d", Pool: resourcev1.ResourcePool{Name: "p"}}},
			[]any{"s", "", "d", "p", "<unknown>"}},
		{"devicetaintrules", &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "k", Value: "v", Effect: "None"}}},
			[]any{"r", "k", "v", "None", "", "<unknown>"}},
		{"deviceclasses", &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}, []any{"gpu", "<unknown>"}},
	} {
		table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
			t.Errorf("%s: cells (-want +got):\n%s", tt.resource, diff)
		}
	}
}
