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

package apps

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// This file is k8s.io/kubernetes 1.37's apps validation
// (pkg/apis/apps/validation) of Deployments, ReplicaSets and DaemonSets,
// ported to the v1 types, in upstream's order and words. An update's
// metadata is k8s.io/apiserver's to check; old is nil on create.

var specPath = field.NewPath("spec")

func nonNegative(v int64, p *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(v, p)
}

func selectorImmutable(selector, old *metav1.LabelSelector) field.ErrorList {
	return apimachineryvalidation.ValidateImmutableField(selector, old, specPath.Child("selector"))
}

// validateDeployment is upstream's ValidateDeploymentSpec, and on update
// the selector kept.
func validateDeployment(d, old *appsv1.Deployment) field.ErrorList {
	spec := &d.Spec
	errs := nonNegative(replicas(spec.Replicas), specPath.Child("replicas"))
	errs = append(errs, validateSelector(spec.Selector, "deployment")...)
	errs = append(errs, validateTemplateForReplicaSet(spec.Selector, &spec.Template, "ReplicaSet")...)
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, specPath.Child("strategy"))...)
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*spec.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	if deadline := spec.ProgressDeadlineSeconds; deadline != nil {
		errs = append(errs, nonNegative(int64(*deadline), specPath.Child("progressDeadlineSeconds"))...)
		if *deadline <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(specPath.Child("progressDeadlineSeconds"), *deadline, "must be greater than minReadySeconds"))
		}
	}
	if old != nil {
		errs = append(errs, selectorImmutable(spec.Selector, old.Spec.Selector)...)
	}
	return errs
}

// validateReplicaSet is upstream's ValidateReplicaSetSpec, and on update
// the selector kept.
func validateReplicaSet(rs, old *appsv1.ReplicaSet) field.ErrorList {
	spec := &rs.Spec
	errs := nonNegative(replicas(spec.Replicas), specPath.Child("replicas"))
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, validateSelector(spec.Selector, "deployment")...) // sic: upstream's word
	errs = append(errs, validateTemplateForReplicaSet(spec.Selector, &spec.Template, "ReplicaSet")...)
	if old != nil {
		errs = append(errs, selectorImmutable(spec.Selector, old.Spec.Selector)...)
	}
	return errs
}

// validateDaemonSet is upstream's ValidateDaemonSetSpec, after the
// selector kept on update. (The template generation upstream also checks
// is the strategy's to count, and cannot go wrong.)
func validateDaemonSet(ds, old *appsv1.DaemonSet) field.ErrorList {
	spec := &ds.Spec
	var errs field.ErrorList
	if old != nil {
		errs = selectorImmutable(spec.Selector, old.Spec.Selector)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, specPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(specPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(specPath.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, pod.ValidatePodTemplateSpec(&spec.Template, specPath.Child("template"))...)
	errs = append(errs, restartsAlways(&spec.Template, "DaemonSet")...)
	errs = append(errs, nonNegative(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, specPath.Child("updateStrategy"))...)
	if spec.RevisionHistoryLimit != nil {
		errs = append(errs, nonNegative(int64(*spec.RevisionHistoryLimit), specPath.Child("revisionHistoryLimit"))...)
	}
	return errs
}

// validateSelector checks a selector required and not empty (its error
// naming kind).
func validateSelector(selector *metav1.LabelSelector, kind string) field.ErrorList {
	p := specPath.Child("selector")
	if selector == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, p)
	if len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p, selector, "empty selector is invalid for "+kind))
	}
	return errs
}

// validateTemplateForReplicaSet is upstream's
// ValidatePodTemplateSpecForReplicaSet, after the selector is parsed: the
// template matches it, is valid and restarts always.
func validateTemplateForReplicaSet(selector *metav1.LabelSelector, template *corev1.PodTemplateSpec, kind string) field.ErrorList {
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return field.ErrorList{field.Invalid(specPath.Child("selector"), selector, "invalid label selector")}
	}
	p := specPath.Child("template")
	var errs field.ErrorList
	if !s.Empty() && !s.Matches(labels.Set(template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), template.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, pod.ValidatePodTemplateSpec(template, p)...)
	return append(errs, restartsAlways(template, kind)...)
}

// restartsAlways checks that a controller's pods restart always and have
// no deadline (kind names the controller in the message).
func restartsAlways(template *corev1.PodTemplateSpec, kind string) field.ErrorList {
	p := specPath.Child("template", "spec")
	var errs field.ErrorList
	if rp := template.Spec.RestartPolicy; rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		ru := s.RollingUpdate
		if ru == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		p = p.Child("rollingUpdate")
		unavailable, surge, errs := unavailableAndSurge(ru.MaxUnavailable, ru.MaxSurge, p)
		if intOrPercent(unavailable) == 0 && intOrPercent(surge) == 0 {
			errs = append(errs, field.Invalid(p.Child("maxUnavailable"), unavailable, "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notOver100Percent(unavailable, p.Child("maxUnavailable"))...)
	default:
		// Upstream's value is the strategy, as its internal type prints.
		return field.ErrorList{field.NotSupported(p, registry.Internal(*s), []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru := s.RollingUpdate
		if ru == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "")}
		}
		p = p.Child("rollingUpdate")
		unavailable, surge, errs := unavailableAndSurge(ru.MaxUnavailable, ru.MaxSurge, p)
		errs = append(errs, notOver100Percent(unavailable, p.Child("maxUnavailable"))...)
		errs = append(errs, notOver100Percent(surge, p.Child("maxSurge"))...)
		switch hasUnavailable, hasSurge := intOrPercent(unavailable) != 0, intOrPercent(surge) != 0; {
		case hasUnavailable && hasSurge:
			errs = append(errs, field.Invalid(p.Child("maxSurge"), surge, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			errs = append(errs, field.Required(p.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
		return errs
	default:
		return field.ErrorList{field.NotSupported(p, registry.Internal(*s), []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
	}
	return nil
}

// unavailableAndSurge checks a rolling update's maxUnavailable and
// maxSurge (at p), each an int or percentage not negative, and returns
// them, 0 if unset (upstream's internal types have no pointers).
func unavailableAndSurge(maxUnavailable, maxSurge *intstr.IntOrString, p *field.Path) (unavailable, surge intstr.IntOrString, errs field.ErrorList) {
	unavailable, surge = orZero(maxUnavailable), orZero(maxSurge)
	errs = positiveIntOrPercent(unavailable, p.Child("maxUnavailable"))
	return unavailable, surge, append(errs, positiveIntOrPercent(surge, p.Child("maxSurge"))...)
}

// orZero is v, or 0 where upstream's internal type has no pointer.
func orZero(v *intstr.IntOrString) intstr.IntOrString {
	if v == nil {
		return intstr.FromInt32(0)
	}
	return *v
}

// positiveIntOrPercent is upstream's ValidatePositiveIntOrPercent.
func positiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if v.Type == intstr.Int {
		return nonNegative(int64(v.IntValue()), p)
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidPercent(v.StrVal) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// percent is v's value if it is a valid percentage.
func percent(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) > 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

// intOrPercent is v's number, percent or not (0 for an invalid string).
func intOrPercent(v intstr.IntOrString) int {
	if n, ok := percent(v); ok {
		return n
	}
	return v.IntValue()
}

func notOver100Percent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	if n, ok := percent(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
	}
	return nil
}
