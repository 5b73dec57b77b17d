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

package horizontalpodautoscaler

import (
	"errors"
	"fmt"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// The bounds of upstream's pkg/apis/autoscaling/validation.
const (
	maxPeriodSeconds              int32 = 1800
	maxStabilizationWindowSeconds int32 = 3600
)

var (
	validSelectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	validPolicyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
	validMetricSources  = []string{
		string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType),
	}
)

// refOptions are upstream's CrossVersionObjectReferenceValidationOptions.
type refOptions struct {
	allowEmptyAPIGroup     bool
	allowInvalidAPIVersion bool
}

// options are upstream's HorizontalPodAutoscalerSpecValidationOptions, as
// its strategy's validationOptionsForHorizontalPodAutoscaler makes them.
type options struct {
	scaleTargetRef refOptions
	objectMetrics  refOptions
}

func optionsFor(hpa, old *autoscalingv2.HorizontalPodAutoscaler) options {
	opts := options{objectMetrics: refOptions{allowEmptyAPIGroup: true}}
	ref := hpa.Spec.ScaleTargetRef
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == ref.APIVersion && old.Spec.ScaleTargetRef.Kind == ref.Kind:
		opts.scaleTargetRef.allowInvalidAPIVersion = true // unchanged
	case ref.Kind == "ReplicationController":
		opts.scaleTargetRef.allowEmptyAPIGroup = true // the one scalable core type
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil && validateAPIVersion(m.Object.DescribedObject, opts.objectMetrics) != nil {
				opts.objectMetrics.allowInvalidAPIVersion = true // already invalid
				break
			}
		}
	}
	return opts
}

// validateSpec is upstream's validateHorizontalPodAutoscalerSpec, with what
// its declarative validation changes at kube-apiserver 1.37's defaults
// (DeclarativeValidationBeta on): the minReplicas and maxReplicas bounds
// are reported after every other error, and a missing maxReplicas as a
// bare "Required value", unless an update leaves the field as it was.
func validateSpec(hpa, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	opts := optionsFor(hpa, old)
	spec := &hpa.Spec
	p := field.NewPath("spec")
	var errs, declarative field.ErrorList
	report := func(changed bool, handwritten, declared *field.Error) {
		if changed {
			declarative = append(declarative, declared)
		} else {
			errs = append(errs, handwritten)
		}
	}
	minChanged := old == nil || !ptr.Equal(spec.MinReplicas, old.Spec.MinReplicas)
	maxChanged := old == nil || spec.MaxReplicas != old.Spec.MaxReplicas
	// HPAScaleToZero is on: minReplicas may be 0.
	if spec.MinReplicas != nil && *spec.MinReplicas < 0 {
		err := field.Invalid(p.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 0")
		report(minChanged, err, err)
	}
	switch {
	case spec.MaxReplicas == 0:
		report(maxChanged, field.Required(p.Child("maxReplicas"), "must be set and greater than 0"), field.Required(p.Child("maxReplicas"), ""))
	case spec.MaxReplicas < 0:
		err := field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to 1")
		report(maxChanged, err, err)
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateRef(spec.ScaleTargetRef, p.Child("scaleTargetRef"), opts.scaleTargetRef)...)
	errs = append(errs, validateMetrics(spec.Metrics, p.Child("metrics"), spec.MinReplicas, opts.objectMetrics)...)
	if b := spec.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, p.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, p.Child("behavior", "scaleDown"))...)
	}
	return append(errs, declarative...)
}

// validateRef is upstream's ValidateCrossVersionObjectReference.
func validateRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.value == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
			continue
		}
		for _, msg := range content.IsPathSegmentName(f.value) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	if err := validateAPIVersion(ref, opts); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

func validateAPIVersion(ref autoscalingv2.CrossVersionObjectReference, opts refOptions) error {
	if opts.allowInvalidAPIVersion {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyAPIGroup && gv.Group == "" {
		return errors.New("apiVersion must specify API group")
	}
	return nil
}

func validateMetrics(metrics []autoscalingv2.MetricSpec, p *field.Path, minReplicas *int32, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	scalesToZero := false // an Object or External metric can
	for i, m := range metrics {
		errs = append(errs, validateMetricSpec(m, p.Index(i), opts)...)
		scalesToZero = scalesToZero || m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType
	}
	if minReplicas != nil && *minReplicas == 0 && !scalesToZero {
		errs = append(errs, field.Forbidden(p, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var errs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	}
	if w := rules.StabilizationWindowSeconds; w != nil && *w > maxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), w, fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if rules.SelectPolicy != nil && !slices.Contains(validSelectPolicies, string(*rules.SelectPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), rules.SelectPolicy, validSelectPolicies))
	}
	policies := p.Child("policies")
	if len(rules.Policies) == 0 {
		errs = append(errs, field.Required(policies, "must specify at least one Policy"))
	}
	for i, policy := range rules.Policies {
		pp := policies.Index(i)
		if !slices.Contains(validPolicyTypes, string(policy.Type)) {
			errs = append(errs, field.NotSupported(pp.Child("type"), policy.Type, validPolicyTypes))
		}
		if policy.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), policy.Value, "must be greater than zero"))
		}
		if policy.PeriodSeconds <= 0 {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), policy.PeriodSeconds, "must be greater than zero"))
		}
		if policy.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), policy.PeriodSeconds, fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
		}
	}
	if rules.Tolerance != nil && rules.Tolerance.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), rules.Tolerance.String(), apimachineryvalidation.IsNegativeErrorMsg))
	}
	return errs
}

// validateMetricSpec is upstream's: one source, the type's, checked (the
// first of those set, if several are).
func validateMetricSpec(spec autoscalingv2.MetricSpec, p *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !slices.Contains(validMetricSources, string(spec.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), spec.Type, validMetricSources))
	}
	var present []string
	check := func(name string, set bool, validate func() field.ErrorList) {
		if !set {
			return
		}
		present = append(present, name)
		if len(present) == 1 {
			errs = append(errs, validate()...)
		}
	}
	check("object", spec.Object != nil, func() field.ErrorList { return validateObjectSource(spec.Object, p.Child("object"), opts) })
	check("external", spec.External != nil, func() field.ErrorList { return validateExternalSource(spec.External, p.Child("external")) })
	check("pods", spec.Pods != nil, func() field.ErrorList { return validatePodsSource(spec.Pods, p.Child("pods")) })
	check("resource", spec.Resource != nil, func() field.ErrorList {
		return validateResourceSource(spec.Resource.Name, spec.Resource.Target, "", p.Child("resource"), false)
	})
	check("containerResource", spec.ContainerResource != nil, func() field.ErrorList {
		return validateResourceSource(spec.ContainerResource.Name, spec.ContainerResource.Target, spec.ContainerResource.Container, p.Child("containerResource"), true)
	})

	expected := map[autoscalingv2.MetricSourceType]struct {
		name string
		set  bool
	}{
		autoscalingv2.ObjectMetricSourceType:            {"object", spec.Object != nil},
		autoscalingv2.PodsMetricSourceType:              {"pods", spec.Pods != nil},
		autoscalingv2.ResourceMetricSourceType:          {"resource", spec.Resource != nil},
		autoscalingv2.ExternalMetricSourceType:          {"external", spec.External != nil},
		autoscalingv2.ContainerResourceMetricSourceType: {"containerResource", spec.ContainerResource != nil},
	}[spec.Type]
	switch {
	case expected.name == "":
		errs = append(errs, field.NotSupported(p.Child("type"), spec.Type, validMetricSources))
	case !expected.set:
		errs = append(errs, field.Required(p.Child(expected.name), "must populate information for the given metric source"))
	}
	if len(present) != 1 {
		// Upstream ranges over a set here; in sorted order for a stable answer.
		slices.Sort(present)
		for _, name := range present {
			if name != expected.name {
				errs = append(errs, field.Forbidden(p.Child(name), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, p *field.Path, opts refOptions) field.ErrorList {
	errs := validateRef(src.DescribedObject, p.Child("describedObject"), opts)
	errs = append(errs, validateMetricIdentifier(src.Metric, p.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, p *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, p.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, p.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

// validateResourceSource is upstream's validateResourceSource and (with
// container) validateContainerResourceSource.
func validateResourceSource(name corev1.ResourceName, target autoscalingv2.MetricTarget, container string, p *field.Path, perContainer bool) field.ErrorList {
	var errs field.ErrorList
	switch {
	case name == "":
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	case perContainer:
		errs = append(errs, resourcequota.ValidateContainerResourceName(name, p.Child("name"))...)
	}
	if perContainer {
		if container == "" {
			errs = append(errs, field.Required(p.Child("container"), "must specify a container"))
		} else {
			for _, msg := range validation.IsDNS1123Label(container) {
				errs = append(errs, field.Invalid(p.Child("container"), container, msg))
			}
		}
	}
	errs = append(errs, validateMetricTarget(target, p.Child("target"))...)
	if target.AverageUtilization == nil && target.AverageValue == nil {
		errs = append(errs, field.Required(p.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if target.AverageUtilization != nil && target.AverageValue != nil {
		errs = append(errs, field.Forbidden(p.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(id.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), id.Name, msg))
	}
	return errs
}

// validateStatus is upstream's ValidateHorizontalPodAutoscalerStatusUpdate
// (but metadata, which the registry checks).
func validateStatus(status *autoscalingv2.HorizontalPodAutoscalerStatus) field.ErrorList {
	p := field.NewPath("status")
	var errs field.ErrorList
	for i, c := range status.Conditions {
		if c.ObservedGeneration != nil {
			errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(*c.ObservedGeneration, p.Child("conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(status.CurrentReplicas), p.Child("currentReplicas"))...)
	return append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(status.DesiredReplicas), p.Child("desiredReplicas"))...)
}
