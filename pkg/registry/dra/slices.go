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
	"fmt"
	"regexp"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// attributeKeyMaxLength is the longest domain/ID of an attribute or a
// capacity, beyond which a key is truncated in a path.
const attributeKeyMaxLength = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength

// validateSliceSpec is upstream's validateResourceSliceSpec (old nil on
// create): the driver and pool (whose name, driver and node never
// change), exactly one way of selecting nodes, devices or shared counters,
// and each device, whose capacities and taints are checked only when new
// or changed.
func validateSliceSpec(spec, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	path := field.NewPath("spec")
	errs := volume.CSIDriverName(spec.Driver, path.Child("driver"))
	pool := path.Child("pool")
	errs = append(errs, validatePoolName(spec.Pool.Name, pool.Child("name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pool.Child("resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pool.Child("generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.Pool.Name, old.Pool.Name, pool.Child("name"))...)
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.Driver, old.Driver, path.Child("driver"))...)
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.NodeName, old.NodeName, path.Child("nodeName"))...)
	}
	errs = append(errs, validateNodeSelection(spec, path)...)
	if spec.SharedCounters != nil && spec.Devices != nil {
		errs = append(errs, field.Invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	for _, d := range spec.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
		}
	}
	errs = append(errs, validateSet(spec.Devices, maxDevices, func(d resourcev1.Device, path *field.Path) field.ErrorList {
		return validateDevice(d, lookupDevice(old, d.Name), path, spec.PerDeviceNodeSelection != nil && *spec.PerDeviceNodeSelection)
	}, func(d resourcev1.Device) string { return d.Name }, path.Child("devices"), coverage{})...)
	return append(errs, validateSet(spec.SharedCounters, resourcev1.ResourceSliceMaxCounterSets, func(c resourcev1.CounterSet, path *field.Path) field.ErrorList {
		errs := validateCounterSetName(c.Name, path.Child("name"))
		return append(errs, validateCounters(c.Counters, resourcev1.ResourceSliceMaxCountersPerCounterSet, path.Child("counters"))...)
	}, func(c resourcev1.CounterSet) string { return c.Name }, path.Child("sharedCounters"), coverage{true, true})...)
}

// validateNodeSelection: exactly one of nodeName, nodeSelector (of one
// term), allNodes and perDeviceNodeSelection, none of them empty or false.
func validateNodeSelection(spec *resourcev1.ResourceSliceSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, validateNodeName(*spec.NodeName, path.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(path.Child("nodeName"), *spec.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, node.ValidateSelector(spec.NodeSelector, path.Child("nodeSelector"))...)
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(path.Child("nodeSelector", "nodeSelectorTerms"), registry.Internal(spec.NodeSelector.NodeSelectorTerms), "must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		name  string
		value *bool
	}{{"allNodes", spec.AllNodes}, {"perDeviceNodeSelection", spec.PerDeviceNodeSelection}} {
		if b.value == nil {
			continue
		}
		if *b.value {
			set = append(set, "`"+b.name+"`")
		} else {
			errs = append(errs, field.Invalid(path.Child(b.name), *b.value, "must be either unset or set to true"))
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, fmt.Sprintf("{%s}", strings.Join(set, ", ")),
			"exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	return errs
}

func lookupDevice(spec *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if spec == nil {
		return nil
	}
	for i := range spec.Devices {
		if spec.Devices[i].Name == name {
			return &spec.Devices[i]
		}
	}
	return nil
}

func validateDevice(d resourcev1.Device, old *resourcev1.Device, path *field.Path, perDeviceNodeSelection bool) field.ErrorList {
	errs := validateLabel(d.Name, path.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	errs = append(errs, validateMap(d.Attributes, -1, attributeKeyMaxLength, validateQualifiedName, validateAttribute, path.Child("attributes"), false)...)
	if old == nil || !apiequality.Semantic.DeepEqual(old.Capacity, d.Capacity) {
		capacity := validateSingleAllocatableCapacity
		if d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations {
			capacity = validateMultiAllocatableCapacity
		}
		errs = append(errs, validateMap(d.Capacity, -1, attributeKeyMaxLength, validateQualifiedName, capacity, path.Child("capacity"), false)...)
	}
	if old == nil || !apiequality.Semantic.DeepEqual(old.Taints, d.Taints) {
		errs = append(errs, validateSlice(d.Taints, resourcev1.DeviceTaintsMaxLength, func(t resourcev1.DeviceTaint, path *field.Path) field.ErrorList {
			return validateTaint(t, nil, path)
		}, path.Child("taints"), coverage{})...)
	}
	errs = append(errs, validateSet(d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice, func(c resourcev1.DeviceCounterConsumption, path *field.Path) field.ErrorList {
		errs := validateCounterSetName(c.CounterSet, path.Child("counterSet"))
		return append(errs, validateCounters(c.Counters, resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption, path.Child("counters"))...)
	}, func(c resourcev1.DeviceCounterConsumption) string { return c.CounterSet }, path.Child("consumesCounters"), coverage{true, true})...)
	errs = append(errs, validateDeviceNodeSelection(d, path, perDeviceNodeSelection)...)
	return append(errs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, path)...)
}

const perDeviceNodes = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"

func validateDeviceNodeSelection(d resourcev1.Device, path *field.Path, perDeviceNodeSelection bool) field.ErrorList {
	if !perDeviceNodeSelection {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			return field.ErrorList{field.Invalid(path, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")}
		}
		return nil
	}
	var errs field.ErrorList
	var set []string
	if d.NodeName != nil {
		if *d.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, validateNodeName(*d.NodeName, path.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(path.Child("nodeName"), *d.NodeName, "must not be empty"))
		}
	}
	if d.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, node.ValidateSelector(d.NodeSelector, path.Child("nodeSelector"))...)
	}
	if d.AllNodes != nil {
		if *d.AllNodes {
			set = append(set, "`allNodes`")
		} else {
			errs = append(errs, field.Invalid(path.Child("allNodes"), *d.AllNodes, "must be either unset or set to true"))
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, perDeviceNodes))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, fmt.Sprintf("{%s}", strings.Join(set, ", ")), perDeviceNodes))
	}
	return errs
}

// validateCounterSetName: a counter set's name, required, a DNS label.
func validateCounterSetName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "").MarkCoveredByDeclarative()}
	}
	return validateLabel(name, path).MarkCoveredByDeclarative()
}

// validateCounters: some counters, named as DNS labels.
func validateCounters(counters map[string]resourcev1.Counter, maxSize int, path *field.Path) field.ErrorList {
	if len(counters) == 0 {
		return field.ErrorList{field.Required(path, "").MarkCoveredByDeclarative()}
	}
	return validateMap(counters, maxSize, validation.DNS1123LabelMaxLength, validateLabel, nil, path, true)
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// validateAttribute: exactly one value (declarative validation's to
// report), a string of at most 64 bytes, a semantic version. List values
// need a feature 1.37 leaves off.
func validateAttribute(a resourcev1.DeviceAttribute, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, set := range []bool{a.BoolValue != nil, a.IntValue != nil} {
		if set {
			n++
		}
	}
	if a.StringValue != nil {
		n++
		if len(*a.StringValue) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(path.Child("string"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	if v := a.VersionValue; v != nil {
		n++
		if !semver.MatchString(*v) {
			errs = append(errs, field.Invalid(path.Child("version"), *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(path.Child("version"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(path, "", "exactly one value must be specified").WithOrigin("union").MarkCoveredByDeclarative())
	case n > 1:
		errs = append(errs, field.Invalid(path, registry.Internal(a), "exactly one value must be specified").WithOrigin("union").MarkCoveredByDeclarative())
	}
	return errs
}

// validateNodeName is core's check of a node's name.
func validateNodeName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
