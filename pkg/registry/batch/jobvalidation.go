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

package batch

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// This file is k8s.io/kubernetes 1.37's validation of a Job's spec
// (pkg/apis/batch/validation), ported to the v1 types, in upstream's
// order and words. (spec.scheduling, behind the GenericWorkload gate, is
// not served.)

// Upstream's limits.
const (
	maxParallelismForIndexedJob             = 100_000
	maxFailedIndexesForIndexedJob           = 100_000
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxPodFailurePolicyRules                = 20
	maxOnExitCodesValues                    = 255
	maxOnPodConditionsPatterns              = 20
	maxManagedByLength                      = 63
	maxSucceededIndexesLength               = 64 * 1024
	maxSuccessPolicyRules                   = 20
)

var (
	podFailurePolicyActions = []batchv1.PodFailurePolicyAction{batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore}
	onExitCodesOperators  = []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	onPodConditionsStatus = []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
	replacementPolicies   = []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}
)

// validateJob is upstream's ValidateJobCreate (old is nil) or
// ValidateJobUpdate, but for the metadata.
func validateJob(j, old *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	if old == nil { // as upstream, the generated selector is checked on create only
		errs = append(errs, validateGeneratedSelector(j)...)
		errs = append(errs, validateJobSpecAndSelector(&j.Spec)...)
	} else {
		errs = append(errs, validateJobSpecUpdate(j, old)...)
	}
	return append(errs, validateNameAllowsCompletions(j)...)
}

// validateGeneratedSelector checks, unless the selector is manual, that
// the template has the labels generated for it and the selector selects
// them.
func validateGeneratedSelector(j *batchv1.Job) field.ErrorList {
	if ptr.Deref(j.Spec.ManualSelector, false) || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	metaPath := specPath.Child("template", "metadata")
	expected := map[string]string{}
	for _, l := range []struct{ key, value string }{
		{legacyControllerUIDLabel, string(j.UID)}, {legacyJobNameLabel, j.Name},
		{batchv1.ControllerUidLabel, string(j.UID)}, {batchv1.JobNameLabel, j.Name},
	} {
		errs = append(errs, hasLabel(j.Spec.Template.Labels, metaPath, l.key, l.value)...)
		expected[l.key] = l.value
	}
	if selector, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !selector.Matches(labels.Set(expected)) {
		errs = append(errs, field.Invalid(specPath.Child("selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

// hasLabel is upstream's ValidateHasLabel.
func hasLabel(l map[string]string, p *field.Path, key, value string) field.ErrorList {
	actual, ok := l[key]
	switch msg := "must be '" + value + "'"; {
	case !ok:
		return field.ErrorList{field.Required(p.Child("labels").Key(key), msg)}
	case actual != value:
		return field.ErrorList{field.Invalid(p.Child("labels").Key(key), l, msg)}
	}
	return nil
}

// validateNameAllowsCompletions: the controller names an Indexed Job's
// pods' hosts "<name>-<index>".
func validateNameAllowsCompletions(j *batchv1.Job) field.ErrorList {
	c := j.Spec.Completions
	if ptr.Deref(j.Spec.CompletionMode, "") != batchv1.IndexedCompletion || c == nil || *c <= 0 {
		return nil
	}
	if host := fmt.Sprintf("%s-%d", j.Name, *c-1); len(validation.IsDNS1123Label(host)) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), j.Name, "will not able to create pod with invalid DNS label: "+host)}
	}
	return nil
}

// validateJobSpecAndSelector is upstream's ValidateJobSpec: the spec,
// then the selector, required and matching the template's labels.
func validateJobSpecAndSelector(spec *batchv1.JobSpec) field.ErrorList {
	errs := validateJobSpec(spec, specPath)
	if spec.Selector == nil {
		errs = append(errs, field.Required(specPath.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, specPath.Child("selector"))...)
	}
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(specPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

func nonNegative(v *int32, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return apimachineryvalidation.ValidateNonnegativeField(int64(*v), p)
}

// validateJobSpec is upstream's validateJobSpec, of a Job's spec or a
// CronJob's job template's (at p).
func validateJobSpec(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	errs := nonNegative(spec.Parallelism, p.Child("parallelism"))
	errs = append(errs, nonNegative(spec.Completions, p.Child("completions"))...)
	if d := spec.ActiveDeadlineSeconds; d != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(*d, p.Child("activeDeadlineSeconds"))...)
	}
	errs = append(errs, nonNegative(spec.BackoffLimit, p.Child("backoffLimit"))...)
	errs = append(errs, nonNegative(spec.TTLSecondsAfterFinished, p.Child("ttlSecondsAfterFinished"))...)
	errs = append(errs, nonNegative(spec.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	if spec.MaxFailedIndexes != nil {
		errs = append(errs, nonNegative(spec.MaxFailedIndexes, p.Child("maxFailedIndexes"))...)
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if m := spec.ManagedBy; m != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(p.Child("managedBy"), *m)...)
		if len(*m) > maxManagedByLength {
			errs = append(errs, field.TooLong(p.Child("managedBy"), "", maxManagedByLength))
		}
	}
	errs = append(errs, validateCompletionMode(spec, p)...)
	if spec.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(spec, p.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
			errs = append(errs, field.Invalid(p.Child("successPolicy"), internalSuccessPolicy(spec.SuccessPolicy), "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(spec, p.Child("successPolicy"))...)
		}
	}
	if r := spec.PodReplacementPolicy; r != nil {
		switch {
		case spec.PodFailurePolicy != nil && *r != batchv1.Failed:
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *r, []batchv1.PodReplacementPolicy{batchv1.Failed}))
		case spec.PodFailurePolicy == nil && !slices.Contains(replacementPolicies, *r):
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *r, replacementPolicies))
		}
	}
	errs = append(errs, pod.ValidatePodTemplateSpec(&spec.Template, p.Child("template"))...)
	restartPath := p.Child("template", "spec", "restartPolicy")
	switch rp := spec.Template.Spec.RestartPolicy; {
	case rp == corev1.RestartPolicyAlways || rp == "":
		errs = append(errs, field.Required(restartPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever:
		errs = append(errs, field.NotSupported(restartPath, rp, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	case spec.PodFailurePolicy != nil && rp != corev1.RestartPolicyNever:
		errs = append(errs, field.Invalid(restartPath, rp, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return errs
}

// validateCompletionMode checks the mode and what depends on it.
func validateCompletionMode(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mode := spec.CompletionMode
	if mode != nil && *mode != batchv1.NonIndexedCompletion && *mode != batchv1.IndexedCompletion {
		errs = append(errs, field.NotSupported(p.Child("completionMode"), *mode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	completions, parallelism, maxFailed := spec.Completions, spec.Parallelism, spec.MaxFailedIndexes
	if mode != nil && *mode == batchv1.IndexedCompletion {
		if completions == nil {
			errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
		}
		if parallelism != nil && *parallelism > maxParallelismForIndexedJob {
			errs = append(errs, field.Invalid(p.Child("parallelism"), *parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
		}
		if completions != nil && maxFailed != nil && *maxFailed > *completions {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *maxFailed, "must be less than or equal to completions"))
		}
		if maxFailed != nil && *maxFailed > maxFailedIndexesForIndexedJob {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *maxFailed, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
		}
		if completions != nil && *completions > completionsSoftLimit && spec.BackoffLimitPerIndex != nil {
			above := fmt.Sprintf("when completions are above %d and used with backoff limit per index", completionsSoftLimit)
			if maxFailed == nil {
				errs = append(errs, field.Required(p.Child("maxFailedIndexes"), fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
			}
			if parallelism != nil && *parallelism > parallelismLimitForHighCompletions {
				errs = append(errs, field.Invalid(p.Child("parallelism"), *parallelism, fmt.Sprintf("must be less than or equal to %d %s", parallelismLimitForHighCompletions, above)))
			}
			if maxFailed != nil && *maxFailed > maxFailedIndexesLimitForHighCompletions {
				errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *maxFailed, fmt.Sprintf("must be less than or equal to %d %s", maxFailedIndexesLimitForHighCompletions, above)))
			}
		}
	}
	if mode == nil || *mode == batchv1.NonIndexedCompletion {
		if b := spec.BackoffLimitPerIndex; b != nil {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *b, "requires indexed completion mode"))
		}
		if maxFailed != nil {
			errs = append(errs, field.Invalid(p.Child("maxFailedIndexes"), *maxFailed, "requires indexed completion mode"))
		}
	}
	return errs
}

// validateJobSpecUpdate is upstream's ValidateJobSpecUpdate: the new
// spec, its completions changed only as an Indexed Job's may, and the
// selector, template (but as a suspended Job's may change) and policies
// kept.
func validateJobSpecUpdate(j, old *batchv1.Job) field.ErrorList {
	spec, oldSpec := &j.Spec, &old.Spec
	errs := validateJobSpecAndSelector(spec)
	errs = append(errs, validateCompletionsUpdate(spec, oldSpec)...)
	errs = append(errs, immutable(spec.Selector, oldSpec.Selector, spec.Selector, "selector")...)
	errs = append(errs, validateTemplateUpdate(spec, old)...)
	errs = append(errs, immutable(spec.CompletionMode, oldSpec.CompletionMode, spec.CompletionMode, "completionMode")...)
	errs = append(errs, immutable(spec.PodFailurePolicy, oldSpec.PodFailurePolicy, internal(spec.PodFailurePolicy), "podFailurePolicy")...)
	errs = append(errs, immutable(spec.BackoffLimitPerIndex, oldSpec.BackoffLimitPerIndex, spec.BackoffLimitPerIndex, "backoffLimitPerIndex")...)
	errs = append(errs, immutable(spec.ManagedBy, oldSpec.ManagedBy, spec.ManagedBy, "managedBy")...)
	return append(errs, immutable(spec.SuccessPolicy, oldSpec.SuccessPolicy, internal(spec.SuccessPolicy), "successPolicy")...)
}

// immutable is upstream's ValidateImmutableField of spec.name, its value
// shown as upstream's message shows it.
func immutable(now, was, shown any, name string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(now, was) {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath.Child(name), shown, apimachineryvalidation.FieldImmutableErrorMsg)}
}

// internal is v as upstream's messages print its internal type (nil as nil).
func internal[T any](v *T) any {
	if v == nil {
		return nil
	}
	return registry.Internal(*v)
}

// validateCompletionsUpdate: completions are immutable but for an Indexed
// Job's, which change with parallelism.
func validateCompletionsUpdate(spec, old *batchv1.JobSpec) field.ErrorList {
	if ptr.Deref(spec.CompletionMode, "") != batchv1.IndexedCompletion {
		return immutable(spec.Completions, old.Completions, spec.Completions, "completions")
	}
	if spec.Completions == nil || apiequality.Semantic.DeepEqual(spec.Completions, old.Completions) {
		return nil
	}
	if *spec.Completions != ptr.Deref(spec.Parallelism, 0) {
		return field.ErrorList{field.Invalid(specPath.Child("completions"), *spec.Completions, "can only be modified in tandem with spec.parallelism")}
	}
	return nil
}

// validateTemplateUpdate is upstream's validatePodTemplateUpdate: the
// template is immutable, but a Job suspended before it ran (or since)
// with no active pods may change its scheduling directives, metadata and
// containers' resources (MutableSchedulingDirectivesForSuspendedJobs and
// MutablePodResourcesForSuspendedJobs, on in 1.37).
func validateTemplateUpdate(spec *batchv1.JobSpec, old *batchv1.Job) field.ErrorList {
	template, oldTemplate := &spec.Template, &old.Spec.Template
	suspended := ptr.Deref(old.Spec.Suspend, false)
	mutable := suspended && (old.Status.StartTime == nil || hasCondition(old.Status.Conditions, batchv1.JobSuspended)) && old.Status.Active == 0
	if mutable {
		oldTemplate = oldTemplate.DeepCopy()
		switch now, was := template.Spec.Affinity, oldTemplate.Spec.Affinity; {
		case now == nil && was != nil:
			if was.NodeAffinity = nil; *was == (corev1.Affinity{}) {
				oldTemplate.Spec.Affinity = nil
			}
		case now != nil && was == nil:
			oldTemplate.Spec.Affinity = &corev1.Affinity{NodeAffinity: now.NodeAffinity}
		case now != nil && was != nil:
			was.NodeAffinity = now.NodeAffinity
		}
		oldTemplate.Spec.NodeSelector, oldTemplate.Spec.Tolerations = template.Spec.NodeSelector, template.Spec.Tolerations
		oldTemplate.Annotations, oldTemplate.Labels = template.Annotations, template.Labels
		oldTemplate.Spec.SchedulingGates = template.Spec.SchedulingGates
	}
	if !suspended || !mutable {
		return immutable(template, oldTemplate, registry.Internal(*template), "template")
	}
	// Only the containers' resources may change besides.
	oldSpec := oldTemplate.Spec.DeepCopy()
	for _, pair := range [][2][]corev1.Container{{template.Spec.Containers, oldSpec.Containers}, {template.Spec.InitContainers, oldSpec.InitContainers}} {
		if now, was := pair[0], pair[1]; len(now) == len(was) {
			for i := range now {
				if was[i].Name == now[i].Name {
					was[i].Resources = now[i].Resources
				}
			}
		}
	}
	if apiequality.Semantic.DeepEqual(template.Spec, *oldSpec) {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath.Child("template.spec"), registry.Internal(template.Spec), apimachineryvalidation.FieldImmutableErrorMsg)}
}
