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
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func equalSpecs(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }

// validateSliceSpec is upstream's validateResourceSliceSpec without the
// devices' attributes, capacities, counters and taints: the driver and
// pool (whose name, driver and node never change), exactly one way of
// selecting nodes, devices or shared counters, device names unique.
func validateSliceSpec(spec, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateDriverName(spec.Driver, path.Child("driver"))
	errs = append(errs, validatePoolName(spec.Pool.Name, path.Child("pool", "name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(path.Child("pool", "resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(path.Child("pool", "generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.Pool.Name, old.Pool.Name, path.Child("pool", "name"))...)
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.Driver, old.Driver, path.Child("driver"))...)
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.NodeName, old.NodeName, path.Child("nodeName"))...)
	}
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, validateSubdomain(*spec.NodeName, path.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(path.Child("nodeName"), *spec.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(path.Child("nodeSelector", "nodeSelectorTerms"), spec.NodeSelector.NodeSelectorTerms, "must have exactly one node selector term"))
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
		errs := validateLabel(d.Name, path.Child("name"))
		for i, t := range d.Taints {
			errs = append(errs, validateTaint(t, nil, path.Child("taints").Index(i))...)
		}
		return errs
	}, func(d resourcev1.Device) string { return d.Name }, path.Child("devices"))...)
	errs = append(errs, validateSet(spec.SharedCounters, resourcev1.ResourceSliceMaxCounterSets, func(c resourcev1.CounterSet, path *field.Path) field.ErrorList {
		return validateLabel(c.Name, path.Child("name"))
	}, func(c resourcev1.CounterSet) string { return c.Name }, path.Child("sharedCounters"))...)
	return errs
}

// validateExtendedResourceName: a device class's extended resource is
// named as upstream's IsExtendedResourceName wants: with a domain other
// than *kubernetes.io, not prefixed "requests.", and a qualified name once
// it is.
func validateExtendedResourceName(name string, path *field.Path) field.ErrorList {
	native := !strings.Contains(name, "/") || strings.Contains(name, corev1.ResourceDefaultNamespacePrefix)
	if native || strings.HasPrefix(name, corev1.DefaultResourceRequestsPrefix) || len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+name)) > 0 {
		return field.ErrorList{field.Invalid(path, name, "must be a valid extended resource name")}
	}
	return nil
}

// validateTemplateMeta: a template's metadata has valid labels and
// annotations and nothing else, as upstream's ValidateTemplateObjectMeta.
func validateTemplateMeta(m *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateAnnotations(m.Annotations, path.Child("annotations"))
	errs = append(errs, metav1validation.ValidateLabels(m.Labels, path.Child("labels"))...)
	t, v := reflect.TypeOf(*m), reflect.ValueOf(*m)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		errs = append(errs, field.Forbidden(path.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set"))
	}
	return errs
}
