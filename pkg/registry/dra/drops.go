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
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// What upstream's strategies drop of a write (old nil on create) for
// features 1.37 leaves off, unless the old object already uses them:
// derived attributes of requests, list-typed attributes, partition types,
// compatibility groups, node allocatable resources, and skipped node
// operations.

// dropClaimSpec drops a claim spec's (or a template's) derived attributes.
func dropClaimSpec(spec, old *resourcev1.ResourceClaimSpec) {
	if old != nil && derivedAttributesInUse(old) {
		return
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}

func derivedAttributesInUse(spec *resourcev1.ResourceClaimSpec) bool {
	for _, r := range spec.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, s := range r.FirstAvailable {
			if len(s.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}

// dropClaimStatus drops an allocation's skipped node operations.
func dropClaimStatus(status, old *resourcev1.ResourceClaimStatus) {
	if status.Allocation == nil || old.Allocation != nil && anyOf(old.Allocation.Devices.Results, func(r resourcev1.DeviceRequestAllocationResult) bool { return len(r.SkipNodeOperations) > 0 }) {
		return
	}
	for i := range status.Allocation.Devices.Results {
		status.Allocation.Devices.Results[i].SkipNodeOperations = nil
	}
}

// dropDeallocatedDevices drops the status of the devices a status update
// deallocates.
func dropDeallocatedDevices(status, old *resourcev1.ResourceClaimStatus) {
	deallocated := sets.New[sharedDeviceID]()
	if old.Allocation != nil {
		for _, r := range old.Allocation.Devices.Results {
			deallocated.Insert(makeSharedDeviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID)))
		}
	}
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			deallocated.Delete(makeSharedDeviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID)))
		}
	}
	var kept []resourcev1.AllocatedDeviceStatus
	for _, d := range status.Devices {
		if !deallocated.Has(makeSharedDeviceID(d.Driver, d.Pool, d.Device, d.ShareID)) {
			kept = append(kept, d)
		}
	}
	status.Devices = kept
}

// dropSlice drops a slice's fields of features that are off, each unless
// in use.
func dropSlice(spec, old *resourcev1.ResourceSliceSpec) {
	inUse := func(used func(*resourcev1.ResourceSliceSpec) bool) bool { return old != nil && used(old) }
	if !inUse(func(s *resourcev1.ResourceSliceSpec) bool { return s.PartitionTypeAttribute != nil }) {
		spec.PartitionTypeAttribute = nil
	}
	if !inUse(func(s *resourcev1.ResourceSliceSpec) bool { return len(s.SkipNodeOperations) > 0 }) {
		spec.SkipNodeOperations = nil
	}
	deviceInUse := func(used func(resourcev1.Device) bool) bool {
		return inUse(func(s *resourcev1.ResourceSliceSpec) bool { return anyOf(s.Devices, used) })
	}
	groups := deviceInUse(func(d resourcev1.Device) bool {
		return anyOf(d.ConsumesCounters, func(c resourcev1.DeviceCounterConsumption) bool { return len(c.CompatibilityGroups) > 0 })
	})
	allocatable := deviceInUse(func(d resourcev1.Device) bool { return len(d.NodeAllocatableResources) > 0 })
	lists := deviceInUse(func(d resourcev1.Device) bool {
		for _, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				return true
			}
		}
		return false
	})
	for i := range spec.Devices {
		d := &spec.Devices[i]
		if !groups {
			for j := range d.ConsumesCounters {
				d.ConsumesCounters[j].CompatibilityGroups = nil
			}
		}
		if !allocatable {
			d.NodeAllocatableResources = nil
		}
		if !lists {
			for k, a := range d.Attributes {
				a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				d.Attributes[k] = a
			}
		}
	}
}

func anyOf[T any](items []T, f func(T) bool) bool {
	for _, it := range items {
		if f(it) {
			return true
		}
	}
	return false
}
