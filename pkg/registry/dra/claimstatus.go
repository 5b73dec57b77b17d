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
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// sharedDeviceID names an allocated device (and its share) as upstream's
// structured.SharedDeviceID prints in a message.
type sharedDeviceID struct{ Driver, Pool, Device, ShareID string }

func makeSharedDeviceID(driver, pool, device string, shareID *string) sharedDeviceID {
	id := sharedDeviceID{Driver: driver, Pool: pool, Device: device}
	if shareID != nil {
		id.ShareID = *shareID
	}
	return id
}

// validateClaimStatusUpdate is upstream's ValidateResourceClaimStatusUpdate
// less the metadata: consumers named and unique (at most 256), the
// devices' status of allocated devices, no consumer without an allocation
// nor a new one of a claim being deleted, and an allocation immutable once
// made, a new one naming the claim's requests.
func validateClaimStatusUpdate(claim, old *resourcev1.ResourceClaim) field.ErrorList {
	path := field.NewPath("status")
	status, oldStatus := &claim.Status, &old.Status
	errs := validateSet(status.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize, func(r resourcev1.ResourceClaimConsumerReference, path *field.Path) field.ErrorList {
		var errs field.ErrorList
		for _, f := range []struct{ name, value string }{{"resource", r.Resource}, {"name", r.Name}, {"uid", string(r.UID)}} {
			if f.value == "" {
				errs = append(errs, field.Required(path.Child(f.name), ""))
			}
		}
		return errs
	}, func(r resourcev1.ResourceClaimConsumerReference) types.UID { return r.UID }, path.Child("reservedFor"), coverage{true, true})
	allocated := sets.New[sharedDeviceID]()
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			allocated.Insert(makeSharedDeviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID)))
		}
	}
	errs = append(errs, validateSet(status.Devices, -1, func(d resourcev1.AllocatedDeviceStatus, path *field.Path) field.ErrorList {
		return validateDeviceStatus(d, path, allocated)
	}, func(d resourcev1.AllocatedDeviceStatus) sharedDeviceID {
		return makeSharedDeviceID(d.Driver, d.Pool, d.Device, d.ShareID)
	}, path.Child("devices"), coverage{uniqueness: true})...)
	if len(status.ReservedFor) > 0 {
		if status.Allocation == nil {
			errs = append(errs, field.Forbidden(path.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		} else if claim.DeletionTimestamp != nil && !sets.New(oldStatus.ReservedFor...).IsSuperset(sets.New(status.ReservedFor...)) {
			errs = append(errs, field.Forbidden(path.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}
	switch {
	case oldStatus.Allocation != nil && status.Allocation != nil:
		errs = append(errs, immutable(status.Allocation, oldStatus.Allocation, registry.Internal(status.Allocation), path.Child("allocation")).WithOrigin("update").MarkCoveredByDeclarative()...)
	case status.Allocation != nil:
		errs = append(errs, validateAllocation(status.Allocation, path.Child("allocation"), gatherRequestNames(&claim.Spec.Devices))...)
	}
	return errs
}

func validateDeviceStatus(d resourcev1.AllocatedDeviceStatus, path *field.Path, allocated sets.Set[sharedDeviceID]) field.ErrorList {
	errs := volume.CSIDriverName(d.Driver, path.Child("driver"))
	errs = append(errs, validatePoolName(d.Pool, path.Child("pool"))...)
	errs = append(errs, validateLabel(d.Device, path.Child("device"))...)
	if d.ShareID != nil {
		errs = append(errs, validateUID(*d.ShareID, path.Child("shareID")).MarkCoveredByDeclarative()...)
	}
	if id := makeSharedDeviceID(d.Driver, d.Pool, d.Device, d.ShareID); !allocated.Has(id) {
		errs = append(errs, field.Invalid(path, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > resourcev1.AllocatedDeviceStatusMaxConditions {
		errs = append(errs, field.TooMany(path.Child("conditions"), len(d.Conditions), resourcev1.AllocatedDeviceStatusMaxConditions))
	}
	errs = append(errs, metav1validation.ValidateConditions(d.Conditions, path.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		errs = append(errs, validateRawExtension(*d.Data, path.Child("data"), false, resourcev1.AllocatedDeviceStatusDataMaxLength)...)
	}
	if n := d.NetworkData; n != nil {
		path := path.Child("networkData")
		if len(n.InterfaceName) > resourcev1.NetworkDeviceDataInterfaceNameMaxLength {
			errs = append(errs, field.TooLong(path.Child("interfaceName"), "", resourcev1.NetworkDeviceDataInterfaceNameMaxLength).WithOrigin("maxBytes").MarkCoveredByDeclarative())
		}
		if len(n.HardwareAddress) > resourcev1.NetworkDeviceDataHardwareAddressMaxLength {
			errs = append(errs, field.TooLong(path.Child("hardwareAddress"), "", resourcev1.NetworkDeviceDataHardwareAddressMaxLength).WithOrigin("maxBytes").MarkCoveredByDeclarative())
		}
		errs = append(errs, validateSet(n.IPs, resourcev1.NetworkDeviceDataMaxIPs, func(ip string, path *field.Path) field.ErrorList {
			return validation.IsValidInterfaceAddress(path, ip)
		}, func(ip string) string { return ip }, path.Child("ips"), coverage{true, true})...)
	}
	return errs
}

// validateAllocation checks a new allocation: its results name requests
// of the claim and devices, its configurations come from the claim or a
// class, its node selector is valid.
func validateAllocation(a *resourcev1.AllocationResult, path *field.Path, names requestNames) field.ErrorList {
	devices := path.Child("devices")
	errs := validateSlice(a.Devices.Results, resourcev1.AllocationResultsMaxSize, func(r resourcev1.DeviceRequestAllocationResult, path *field.Path) field.ErrorList {
		errs := validateRequestRef(r.Request, path.Child("request"), names)
		errs = append(errs, volume.CoveredCSIDriverName(r.Driver, path.Child("driver"))...)
		errs = append(errs, validatePoolName(r.Pool, path.Child("pool")).MarkCoveredByDeclarative()...)
		errs = append(errs, validateLabel(r.Device, path.Child("device"))...)
		errs = append(errs, validateBindingConditions(r.BindingConditions, r.BindingFailureConditions, path)...)
		errs = append(errs, validateTolerations(r.Tolerations, path.Child("tolerations"))...)
		if r.ShareID != nil {
			errs = append(errs, validateUID(string(*r.ShareID), path.Child("shareID")).MarkCoveredByDeclarative()...)
		}
		return errs
	}, devices.Child("results"), coverage{size: true})
	errs = append(errs, validateSlice(a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceAllocationConfiguration, path *field.Path) field.ErrorList {
		var errs field.ErrorList
		switch c.Source {
		case "":
			errs = append(errs, field.Required(path.Child("source"), "").MarkCoveredByDeclarative())
		case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
		default:
			errs = append(errs, field.NotSupported(path.Child("source"), c.Source, []resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass}).MarkCoveredByDeclarative())
		}
		errs = append(errs, validateRequestRefs(c.Requests, path.Child("requests"), names)...)
		return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, path, false)...)
	}, devices.Child("config"), coverage{size: true})...)
	if a.NodeSelector != nil {
		errs = append(errs, node.ValidateSelector(a.NodeSelector, path.Child("nodeSelector"))...)
	}
	return errs
}
