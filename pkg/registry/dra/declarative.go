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

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules 1.37's declarative validation (beta, enforced by default)
// checks of resource.k8s.io/v1 (upstream's zz_generated.validations.go),
// in the order it walks the fields; registry.WithDeclarative puts them
// after the handwritten errors they cover. On update, what has not
// changed is not checked again.

var ctx = context.Background()

// opOf is a create without an old object, else an update.
func opOf[T any](old *T) operation.Operation {
	if old == nil {
		return operation.Operation{Type: operation.Create}
	}
	return operation.Operation{Type: operation.Update}
}

// unchanged: an update leaves the value as it was.
func unchanged(op operation.Operation, value, old any) bool {
	return op.Type == operation.Update && equality.Semantic.DeepEqual(value, old)
}

// declarativeList checks a list: at most maxItems (then nothing else), no
// two items that match (if unique), and each item new or changed (as
// match correlates old ones; all of them without match).
func declarativeList[T any](op operation.Operation, path *field.Path, items, old []T, maxItems int, match validate.MatchFunc[*T], unique bool, item validate.ValidateFunc[*T]) field.ErrorList {
	if unchanged(op, items, old) {
		return nil
	}
	if maxItems >= 0 {
		if errs := validate.MaxItems(ctx, op, path, items, old, maxItems); len(errs) > 0 {
			return errs
		}
	}
	var errs field.ErrorList
	if unique {
		errs = validate.ValSliceUnique(ctx, op, path, items, old, match)
	}
	if item != nil {
		var equiv validate.MatchFunc[*T]
		if match != nil {
			equiv = validate.SemanticDeepEqual
		}
		errs = append(errs, validate.EachValSliceVal(ctx, op, path, items, old, match, equiv, item)...)
	}
	return errs
}

// required is RequiredValue, then (unless that failed) check.
func required[T ~string](op operation.Operation, path *field.Path, value T, check validate.ValidateFunc[*T]) field.ErrorList {
	if errs := validate.RequiredValue(ctx, op, path, &value, nil); len(errs) > 0 {
		return errs
	}
	if check == nil {
		return nil
	}
	return check(ctx, op, path, &value, nil)
}

// optional is check of a set value.
func optional[T ~string](op operation.Operation, path *field.Path, value T, check validate.ValidateFunc[*T]) field.ErrorList {
	if value == "" {
		return nil
	}
	return check(ctx, op, path, &value, nil)
}

func enum[T ~string](values ...T) validate.ValidateFunc[*T] {
	symbols := sets.New(values...)
	return func(ctx context.Context, op operation.Operation, path *field.Path, value, old *T) field.ErrorList {
		return validate.Enum(ctx, op, path, value, old, symbols, nil)
	}
}

var (
	allocationModes     = enum(resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount)
	tolerationOperatorE = enum(resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists)
	taintEffectE        = enum(resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNone)
	configSources       = enum(resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass)
)

func declarativeDeviceClaim(op operation.Operation, path *field.Path, d, old *resourcev1.DeviceClaim) field.ErrorList {
	var oldRequests []resourcev1.DeviceRequest
	var oldConstraints []resourcev1.DeviceConstraint
	var oldConfig []resourcev1.DeviceClaimConfiguration
	if old != nil {
		oldRequests, oldConstraints, oldConfig = old.Requests, old.Constraints, old.Config
	}
	errs := declarativeList(op, path.Child("requests"), d.Requests, oldRequests, resourcev1.DeviceRequestsMaxSize,
		func(a, b *resourcev1.DeviceRequest) bool { return a.Name == b.Name }, true, declarativeRequest)
	errs = append(errs, declarativeList(op, path.Child("constraints"), d.Constraints, oldConstraints, resourcev1.DeviceConstraintsMaxSize, nil, false,
		func(_ context.Context, op operation.Operation, path *field.Path, c, _ *resourcev1.DeviceConstraint) field.ErrorList {
			errs := declarativeRequestRefs(op, path.Child("requests"), c.Requests)
			if c.MatchAttribute != nil {
				errs = append(errs, validate.ResourceFullyQualifiedName(ctx, op, path.Child("matchAttribute"), c.MatchAttribute, nil)...)
			}
			if c.DistinctAttribute != nil {
				errs = append(errs, validate.ResourceFullyQualifiedName(ctx, op, path.Child("distinctAttribute"), c.DistinctAttribute, nil)...)
			}
			return errs
		})...)
	return append(errs, declarativeList(op, path.Child("config"), d.Config, oldConfig, resourcev1.DeviceConfigMaxSize, nil, false,
		func(_ context.Context, op operation.Operation, path *field.Path, c, _ *resourcev1.DeviceClaimConfiguration) field.ErrorList {
			errs := declarativeRequestRefs(op, path.Child("requests"), c.Requests)
			return append(errs, declarativeConfiguration(op, path, &c.DeviceConfiguration)...)
		})...)
}

func declarativeRequestRefs(op operation.Operation, path *field.Path, refs []string) field.ErrorList {
	return declarativeList(op, path, refs, nil, resourcev1.DeviceRequestsMaxSize, validate.DirectEqual, true, nil)
}

func declarativeRequest(_ context.Context, op operation.Operation, path *field.Path, r, old *resourcev1.DeviceRequest) field.ErrorList {
	var errs field.ErrorList
	if e := r.Exactly; e != nil {
		path := path.Child("exactly")
		errs = declarativeList(op, path.Child("selectors"), e.Selectors, nil, resourcev1.DeviceSelectorsMaxSize, nil, false, nil)
		errs = append(errs, optional(op, path.Child("allocationMode"), e.AllocationMode, allocationModes)...)
		errs = append(errs, declarativeTolerations(op, path.Child("tolerations"), e.Tolerations)...)
	}
	var oldSubs []resourcev1.DeviceSubRequest
	if old != nil {
		oldSubs = old.FirstAvailable
	}
	return append(errs, declarativeList(op, path.Child("firstAvailable"), r.FirstAvailable, oldSubs, resourcev1.FirstAvailableDeviceRequestMaxSize,
		func(a, b *resourcev1.DeviceSubRequest) bool { return a.Name == b.Name }, true,
		func(_ context.Context, op operation.Operation, path *field.Path, s, _ *resourcev1.DeviceSubRequest) field.ErrorList {
			errs := required(op, path.Child("deviceClassName"), s.DeviceClassName, validate.LongName)
			errs = append(errs, declarativeList(op, path.Child("selectors"), s.Selectors, nil, resourcev1.DeviceSelectorsMaxSize, nil, false, nil)...)
			errs = append(errs, optional(op, path.Child("allocationMode"), s.AllocationMode, allocationModes)...)
			return append(errs, declarativeTolerations(op, path.Child("tolerations"), s.Tolerations)...)
		})...)
}

func declarativeTolerations(op operation.Operation, path *field.Path, tolerations []resourcev1.DeviceToleration) field.ErrorList {
	return declarativeList(op, path, tolerations, nil, -1, nil, false,
		func(_ context.Context, op operation.Operation, path *field.Path, t, _ *resourcev1.DeviceToleration) field.ErrorList {
			errs := optional(op, path.Child("key"), t.Key, validate.LabelKey)
			errs = append(errs, required(op, path.Child("operator"), t.Operator, tolerationOperatorE)...)
			return append(errs, optional(op, path.Child("effect"), t.Effect, taintEffectE)...)
		})
}

// declarativeConfiguration: an opaque configuration's driver.
func declarativeConfiguration(op operation.Operation, path *field.Path, c *resourcev1.DeviceConfiguration) field.ErrorList {
	if c.Opaque == nil {
		return nil
	}
	path = path.Child("opaque", "driver")
	return required(op, path, c.Opaque.Driver, func(ctx context.Context, op operation.Operation, path *field.Path, driver, _ *string) field.ErrorList {
		errs := validate.LongNameCaseless(ctx, op, path, driver, nil)
		return append(errs, validate.MaxLength(ctx, op, path, driver, nil, 63)...)
	})
}

func declarativeClassSpec(op operation.Operation, path *field.Path, spec, old *resourcev1.DeviceClassSpec) field.ErrorList {
	var oldSelectors []resourcev1.DeviceSelector
	var oldConfig []resourcev1.DeviceClassConfiguration
	var oldName *string
	if old != nil {
		oldSelectors, oldConfig, oldName = old.Selectors, old.Config, old.ExtendedResourceName
	}
	errs := declarativeList(op, path.Child("selectors"), spec.Selectors, oldSelectors, resourcev1.DeviceSelectorsMaxSize, nil, false, nil)
	errs = append(errs, declarativeList(op, path.Child("config"), spec.Config, oldConfig, resourcev1.DeviceConfigMaxSize, nil, false,
		func(_ context.Context, op operation.Operation, path *field.Path, c, _ *resourcev1.DeviceClassConfiguration) field.ErrorList {
			return declarativeConfiguration(op, path, &c.DeviceConfiguration)
		})...)
	if name := spec.ExtendedResourceName; name != nil && !unchanged(op, name, oldName) {
		errs = append(errs, validate.ExtendedResourceName(ctx, op, path.Child("extendedResourceName"), name, nil)...)
	}
	return errs
}

// declarativeTaint: a taint's effect, required and known, when new or
// changed.
func declarativeTaint(op operation.Operation, path *field.Path, t, old *resourcev1.DeviceTaint) field.ErrorList {
	if old != nil && old.Effect == t.Effect {
		return nil
	}
	return required(op, path.Child("effect"), t.Effect, taintEffectE)
}

var attributeUnion = validate.NewUnionMembership(validate.NewUnionMember("int"), validate.NewUnionMember("bool"), validate.NewUnionMember("string"), validate.NewUnionMember("version"),
	validate.NewUnionMember("ints"), validate.NewUnionMember("bools"), validate.NewUnionMember("strings"), validate.NewUnionMember("versions"))

func declarativeSliceSpec(op operation.Operation, path *field.Path, spec, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	var oldDevices []resourcev1.Device
	var oldCounters []resourcev1.CounterSet
	if old != nil {
		oldDevices, oldCounters = old.Devices, old.SharedCounters
	}
	errs := declarativeList(op, path.Child("devices"), spec.Devices, oldDevices, -1, nil, false, declarativeDevice)
	return append(errs, declarativeList(op, path.Child("sharedCounters"), spec.SharedCounters, oldCounters, resourcev1.ResourceSliceMaxCounterSets,
		func(a, b *resourcev1.CounterSet) bool { return a.Name == b.Name }, true,
		func(_ context.Context, op operation.Operation, path *field.Path, c, _ *resourcev1.CounterSet) field.ErrorList {
			errs := required(op, path.Child("name"), c.Name, validate.ShortName)
			return append(errs, declarativeCounters(op, path.Child("counters"), c.Counters)...)
		})...)
}

func declarativeCounters(op operation.Operation, path *field.Path, counters map[string]resourcev1.Counter) field.ErrorList {
	if errs := validate.RequiredMap(ctx, op, path, counters, nil); len(errs) > 0 {
		return errs
	}
	return validate.EachMapKey(ctx, op, path, counters, nil, validate.ShortName)
}

func declarativeDevice(_ context.Context, op operation.Operation, path *field.Path, d, _ *resourcev1.Device) field.ErrorList {
	errs := validate.EachMapVal(ctx, op, path.Child("attributes"), d.Attributes, nil, validate.SemanticDeepEqual,
		func(ctx context.Context, op operation.Operation, path *field.Path, a, old *resourcev1.DeviceAttribute) field.ErrorList {
			return validate.Union(ctx, op, path, a, old, attributeUnion,
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && a.IntValue != nil },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && a.BoolValue != nil },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && a.StringValue != nil },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && a.VersionValue != nil },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && len(a.IntValues) != 0 },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && len(a.BoolValues) != 0 },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && len(a.StringValues) != 0 },
				func(a *resourcev1.DeviceAttribute) bool { return a != nil && len(a.VersionValues) != 0 })
		})
	errs = append(errs, declarativeList(op, path.Child("consumesCounters"), d.ConsumesCounters, nil, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice,
		func(a, b *resourcev1.DeviceCounterConsumption) bool { return a.CounterSet == b.CounterSet }, true,
		func(_ context.Context, op operation.Operation, path *field.Path, c, _ *resourcev1.DeviceCounterConsumption) field.ErrorList {
			errs := required(op, path.Child("counterSet"), c.CounterSet, validate.ShortName)
			return append(errs, declarativeCounters(op, path.Child("counters"), c.Counters)...)
		})...)
	errs = append(errs, declarativeList(op, path.Child("taints"), d.Taints, nil, -1, nil, false,
		func(_ context.Context, op operation.Operation, path *field.Path, t, _ *resourcev1.DeviceTaint) field.ErrorList {
			return declarativeTaint(op, path, t, nil)
		})...)
	errs = append(errs, declarativeList(op, path.Child("bindingConditions"), d.BindingConditions, nil, resourcev1.BindingConditionsMaxSize, nil, false, nil)...)
	return append(errs, declarativeList(op, path.Child("bindingFailureConditions"), d.BindingFailureConditions, nil, resourcev1.BindingFailureConditionsMaxSize, nil, false, nil)...)
}

// declarativeClaimStatus: an allocation is never changed, consumers are
// unique by uid, devices' status unique by device and share, with a
// share's UUID and network data of bounded size.
func declarativeClaimStatus(path *field.Path, status, old *resourcev1.ResourceClaimStatus) field.ErrorList {
	op := operation.Operation{Type: operation.Update}
	var errs field.ErrorList
	if status.Allocation != nil && old.Allocation != nil && !unchanged(op, status.Allocation, old.Allocation) {
		errs = validate.UpdatePointer(ctx, op, path.Child("allocation"), status.Allocation, old.Allocation, validate.NoModify)
	}
	errs = append(errs, declarativeList(op, path.Child("reservedFor"), status.ReservedFor, old.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize,
		func(a, b *resourcev1.ResourceClaimConsumerReference) bool { return a.UID == b.UID }, true, nil)...)
	sameDevice := func(a, b *resourcev1.AllocatedDeviceStatus) bool {
		return makeSharedDeviceID(a.Driver, a.Pool, a.Device, a.ShareID) == makeSharedDeviceID(b.Driver, b.Pool, b.Device, b.ShareID) && (a.ShareID == nil) == (b.ShareID == nil)
	}
	return append(errs, declarativeList(op, path.Child("devices"), status.Devices, old.Devices, -1, sameDevice, true,
		func(_ context.Context, op operation.Operation, path *field.Path, d, _ *resourcev1.AllocatedDeviceStatus) field.ErrorList {
			var errs field.ErrorList
			if d.ShareID != nil {
				errs = validate.UUID(ctx, op, path.Child("shareID"), d.ShareID, nil)
			}
			n := d.NetworkData
			if n == nil {
				return errs
			}
			path = path.Child("networkData")
			errs = append(errs, optional(op, path.Child("interfaceName"), n.InterfaceName, func(ctx context.Context, op operation.Operation, path *field.Path, v, _ *string) field.ErrorList {
				return validate.MaxBytes(ctx, op, path, v, nil, resourcev1.NetworkDeviceDataInterfaceNameMaxLength)
			})...)
			errs = append(errs, declarativeList(op, path.Child("ips"), n.IPs, nil, resourcev1.NetworkDeviceDataMaxIPs, validate.DirectEqual, true, nil)...)
			return append(errs, optional(op, path.Child("hardwareAddress"), n.HardwareAddress, func(ctx context.Context, op operation.Operation, path *field.Path, v, _ *string) field.ErrorList {
				return validate.MaxBytes(ctx, op, path, v, nil, resourcev1.NetworkDeviceDataHardwareAddressMaxLength)
			})...)
		})...)
}
