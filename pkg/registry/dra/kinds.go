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
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Each kind's validation, less the metadata, on a create (old nil) or an
// update: upstream's handwritten errors, then its declarative ones.

var specPath = field.NewPath("spec")

// validateClass: selectors and configurations, checked as stored when
// unchanged, and an extended resource's name.
func validateClass(spec, old *resourcev1.DeviceClassSpec) field.ErrorList {
	errs := validateSelectors(spec.Selectors, specPath.Child("selectors"), old != nil && apiequality.Semantic.DeepEqual(spec.Selectors, old.Selectors))
	storedConfig := old != nil && apiequality.Semantic.DeepEqual(spec.Config, old.Config)
	errs = append(errs, validateSlice(spec.Config, resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceClassConfiguration, path *field.Path) field.ErrorList {
		return validateDeviceConfiguration(c.DeviceConfiguration, path, storedConfig)
	}, specPath.Child("config"), coverage{size: true})...)
	if name := spec.ExtendedResourceName; name != nil && !isExtendedResourceName(*name) {
		errs = append(errs, field.Invalid(specPath.Child("extendedResourceName"), *name, "must be a valid extended resource name").MarkCoveredByDeclarative().WithOrigin("format=k8s-extended-resource-name"))
	}
	return registry.WithDeclarative(errs, declarativeClassSpec(opOf(old), specPath, spec, old))
}

// isExtendedResourceName is upstream's IsExtendedResourceName: a domain
// other than *kubernetes.io, not prefixed "requests.", and a qualified
// name once it is.
func isExtendedResourceName(name string) bool {
	native := !strings.Contains(name, "/") || strings.Contains(name, corev1.ResourceDefaultNamespacePrefix)
	return !native && !strings.HasPrefix(name, corev1.DefaultResourceRequestsPrefix) && len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+name)) == 0
}

// validateTaintRule: the selector's driver, pool and device, and the taint.
func validateTaintRule(rule, old *resourcev1.DeviceTaintRule) field.ErrorList {
	var errs field.ErrorList
	if s := rule.Spec.DeviceSelector; s != nil {
		path := specPath.Child("deviceSelector")
		if s.Driver != nil {
			errs = append(errs, volume.CSIDriverName(*s.Driver, path.Child("driver"))...)
		}
		if s.Pool != nil {
			errs = append(errs, validatePoolName(*s.Pool, path.Child("pool"))...)
		}
		if s.Device != nil {
			errs = append(errs, validateLabel(*s.Device, path.Child("device"))...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Spec.Taint
	}
	path := specPath.Child("taint")
	errs = append(errs, validateTaint(rule.Spec.Taint, oldTaint, path)...)
	return registry.WithDeclarative(errs, declarativeTaint(opOf(oldTaint), path, &rule.Spec.Taint, oldTaint))
}

// validateTaintRuleStatus: valid conditions, a few of them.
func validateTaintRuleStatus(status *resourcev1.DeviceTaintRuleStatus) field.ErrorList {
	path := field.NewPath("status", "conditions")
	errs := metav1validation.ValidateConditions(status.Conditions, path)
	if len(status.Conditions) > resourcev1.DeviceTaintRuleStatusMaxConditions {
		errs = append(errs, field.TooMany(path, len(status.Conditions), resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return errs
}

func validateClaim(spec *resourcev1.ResourceClaimSpec) field.ErrorList {
	op := operation.Operation{Type: operation.Create}
	return registry.WithDeclarative(validateClaimSpec(spec, specPath), declarativeDeviceClaim(op, specPath.Child("devices"), &spec.Devices, nil))
}

// validateClaimUpdate: the spec is immutable, and only that is checked.
func validateClaimUpdate(spec, old *resourcev1.ResourceClaimSpec) field.ErrorList {
	errs := immutable(spec, old, registry.Internal(spec), specPath).WithOrigin("immutable").MarkCoveredByDeclarative()
	var declarative field.ErrorList
	if !apiequality.Semantic.DeepEqual(spec, old) {
		declarative = validate.Immutable(ctx, operation.Operation{Type: operation.Update}, specPath, spec, old)
	}
	return registry.WithDeclarative(errs, declarative)
}

// templateSpec is a template's spec as upstream's internal type prints in
// a message: the metadata's fields, then the claim's spec.
type templateSpec struct {
	metav1.ObjectMeta
	Spec any
}

// validateTemplate: the template's metadata and claim spec, both checked
// on update too, where the spec is immutable.
func validateTemplate(spec, old *resourcev1.ResourceClaimTemplateSpec) field.ErrorList {
	path := specPath.Child("spec")
	errs := validateTemplateMeta(&spec.ObjectMeta, specPath.Child("metadata"))
	errs = append(errs, validateClaimSpec(&spec.Spec, path)...)
	var oldDevices *resourcev1.DeviceClaim
	if old != nil {
		oldDevices = &old.Spec.Devices
		errs = append(errs, immutable(spec, old, templateSpec{spec.ObjectMeta, registry.Internal(spec.Spec)}, specPath)...)
	}
	return registry.WithDeclarative(errs, declarativeDeviceClaim(opOf(old), path.Child("devices"), &spec.Spec.Devices, oldDevices))
}

// immutable is ValidateImmutableField of value, shown as upstream's
// internal type prints.
func immutable(value, old, shown any, path *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(value, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, shown, apimachineryvalidation.FieldImmutableErrorMsg)}
}

func validateResourceSlice(spec, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	return registry.WithDeclarative(validateSliceSpec(spec, old), declarativeSliceSpec(opOf(old), specPath, spec, old))
}
