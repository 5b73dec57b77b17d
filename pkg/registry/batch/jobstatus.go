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
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// This file is k8s.io/kubernetes 1.37's validation of a Job's status
// update (ValidateJobStatusUpdate, with the options its status strategy
// passes under the locked JobManagedBy gate), in upstream's order and
// words.

// statusRules are upstream's JobStatusValidationOptions: the rules a
// status update is held to. Most hold only when a field they read
// changed, so that a status a spec change made invalid can still be
// mended by its controller.
type statusRules struct {
	decreasingSucceeded, invalidCompletedIndexes, invalidFailedIndexes,
	completedIndexesNonIndexed, failedIndexesNoBackoffLimitPerIndex, failedOverlappingCompleted,
	failedWithoutFailureTarget, completeWithoutSuccessCriteriaMet, finishedWithActive,
	finishedWithoutStartTime, finishedWithUncounted, startTimeUpdate, completionBeforeStart,
	notCompleteWithCompletionTime, completeWithoutCompletionTime, completeWithFailed,
	completeWithFailureTarget, moreReadyThanActive, finishedWithTerminating bool
}

// statusRulesFor is upstream's getStatusValidationOptions.
func statusRulesFor(j, old *batchv1.Job) statusRules {
	now, was := &j.Status, &old.Status
	changed := func(c batchv1.JobConditionType) bool {
		return hasCondition(was.Conditions, c) != hasCondition(now.Conditions, c)
	}
	finishedChanged := isFinished(old) != isFinished(j)
	completeChanged, failedChanged := changed(batchv1.JobComplete), changed(batchv1.JobFailed)
	completedIndexesChanged := was.CompletedIndexes != now.CompletedIndexes
	failedIndexesChanged := !ptr.Equal(was.FailedIndexes, now.FailedIndexes)
	activeChanged := was.Active != now.Active
	startTimeChanged := !ptr.Equal(was.StartTime, now.StartTime)
	completionTimeChanged := !ptr.Equal(was.CompletionTime, now.CompletionTime)
	suspendedWithZeroCompletions := ptr.Equal(j.Spec.Suspend, ptr.To(true)) && ptr.Equal(j.Spec.Completions, ptr.To[int32](0))
	resuming := hasCondition(was.Conditions, batchv1.JobSuspended) && hasConditionStatus(now.Conditions, batchv1.JobSuspended, corev1.ConditionFalse)
	return statusRules{
		decreasingSucceeded:                 !indexed(j) || !ptr.Equal(j.Spec.Completions, j.Spec.Parallelism),
		invalidCompletedIndexes:             completedIndexesChanged,
		invalidFailedIndexes:                failedIndexesChanged,
		completedIndexesNonIndexed:          completedIndexesChanged,
		failedIndexesNoBackoffLimitPerIndex: failedIndexesChanged,
		failedOverlappingCompleted:          failedIndexesChanged || completedIndexesChanged,
		failedWithoutFailureTarget:          failedChanged || failedIndexesChanged,
		completeWithoutSuccessCriteriaMet:   completeChanged || changed(batchv1.JobSuccessCriteriaMet),
		finishedWithActive:                  finishedChanged || activeChanged,
		finishedWithoutStartTime:            (finishedChanged || startTimeChanged) && !suspendedWithZeroCompletions,
		finishedWithUncounted:               finishedChanged || !apiequality.Semantic.DeepEqual(was.UncountedTerminatedPods, now.UncountedTerminatedPods),
		startTimeUpdate:                     startTimeChanged && !resuming,
		completionBeforeStart:               startTimeChanged || completionTimeChanged,
		notCompleteWithCompletionTime:       completeChanged || completionTimeChanged,
		completeWithoutCompletionTime:       completeChanged || completionTimeChanged,
		completeWithFailed:                  completeChanged || failedChanged,
		completeWithFailureTarget:           completeChanged || changed(batchv1.JobFailureTarget),
		moreReadyThanActive:                 !ptr.Equal(was.Ready, now.Ready) || activeChanged,
		finishedWithTerminating:             finishedChanged || !ptr.Equal(was.Terminating, now.Terminating),
	}
}

// validateStatusUpdate is upstream's ValidateJobStatusUpdate.
func validateStatusUpdate(j, old *batchv1.Job) field.ErrorList {
	rules := statusRulesFor(j, old)
	p := field.NewPath("status")
	errs := validateStatus(j, rules, p)
	for _, c := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if hasCondition(old.Status.Conditions, c) && !hasCondition(j.Status.Conditions, c) {
			errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", c)))
		}
	}
	now, was := &j.Status, &old.Status
	if now.Failed < was.Failed {
		errs = append(errs, field.Invalid(p.Child("failed"), now.Failed, "cannot decrease the failed counter"))
	}
	if rules.decreasingSucceeded && now.Succeeded < was.Succeeded {
		errs = append(errs, field.Invalid(p.Child("succeeded"), now.Succeeded, "cannot decrease the succeeded counter"))
	}
	if now.CompletionTime != nil && was.CompletionTime != nil && !ptr.Equal(now.CompletionTime, was.CompletionTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), now.CompletionTime, "field is immutable"))
	}
	if rules.startTimeUpdate && was.StartTime != nil && !ptr.Equal(was.StartTime, now.StartTime) && !ptr.Deref(j.Spec.Suspend, false) {
		errs = append(errs, field.Invalid(p.Child("startTime"), now.StartTime, "field is immutable for unsuspended job once set"))
	}
	if successCriteriaMet(old) && !successCriteriaMet(j) {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if hasCondition(was.Conditions, batchv1.JobComplete) && !successCriteriaMet(old) && successCriteriaMet(j) {
		errs = append(errs, field.Invalid(p.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

// validateStatus is upstream's validateJobStatus.
func validateStatus(j *batchv1.Job, rules statusRules, p *field.Path) field.ErrorList {
	s := &j.Status
	errs := apimachineryvalidation.ValidateNonnegativeField(int64(s.Active), p.Child("active"))
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(s.Succeeded), p.Child("succeeded"))...)
	errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(s.Failed), p.Child("failed"))...)
	errs = append(errs, nonNegative(s.Ready, p.Child("ready"))...)
	errs = append(errs, nonNegative(s.Terminating, p.Child("terminating"))...)
	errs = append(errs, validateUncounted(s.UncountedTerminatedPods, p.Child("uncountedTerminatedPods"))...)
	complete, failed, finished := hasCondition(s.Conditions, batchv1.JobComplete), hasCondition(s.Conditions, batchv1.JobFailed), isFinished(j)
	failureTarget, successCriteriaMet := hasCondition(s.Conditions, batchv1.JobFailureTarget), successCriteriaMet(j)
	conditions := func(detail string) *field.Error {
		return field.Invalid(p.Child("conditions"), field.OmitValueType{}, detail)
	}
	if rules.completeWithFailed && complete && failed {
		errs = append(errs, conditions("cannot set Complete=True and Failed=true conditions"))
	}
	if rules.completeWithFailureTarget && complete && failureTarget {
		errs = append(errs, conditions("cannot set Complete=True and FailureTarget=true conditions"))
	}
	if rules.notCompleteWithCompletionTime && s.CompletionTime != nil && !complete {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
	}
	if rules.completeWithoutCompletionTime && s.CompletionTime == nil && complete {
		errs = append(errs, field.Required(p.Child("completionTime"), "completionTime is required for Complete jobs"))
	}
	if rules.completionBeforeStart && s.StartTime != nil && s.CompletionTime != nil && s.CompletionTime.Before(s.StartTime) {
		errs = append(errs, field.Invalid(p.Child("completionTime"), s.CompletionTime, "must be equal to or after `startTime`"))
	}
	if rules.failedWithoutFailureTarget && failed && !failureTarget {
		errs = append(errs, conditions("cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if rules.completeWithoutSuccessCriteriaMet && complete && !successCriteriaMet {
		errs = append(errs, conditions("cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	if rules.finishedWithActive && s.Active > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("active"), s.Active, "active>0 is invalid for finished job"))
	}
	if rules.finishedWithoutStartTime && s.StartTime == nil && finished {
		errs = append(errs, field.Required(p.Child("startTime"), "startTime is required for finished job"))
	}
	if u := s.UncountedTerminatedPods; rules.finishedWithUncounted && finished && u != nil && len(u.Failed)+len(u.Succeeded) > 0 {
		errs = append(errs, field.Invalid(p.Child("uncountedTerminatedPods"), registry.Internal(*u), "must be empty for finished job"))
	}
	errs = append(errs, validateStatusIndexes(j, rules, p)...)
	if rules.finishedWithTerminating && s.Terminating != nil && *s.Terminating > 0 && finished {
		errs = append(errs, field.Invalid(p.Child("terminating"), s.Terminating, "terminating>0 is invalid for finished job"))
	}
	if rules.moreReadyThanActive && s.Ready != nil && *s.Ready > s.Active {
		errs = append(errs, field.Invalid(p.Child("ready"), *s.Ready, "cannot set more ready pods than active"))
	}
	if successCriteriaMet && failed {
		errs = append(errs, conditions("cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if successCriteriaMet && failureTarget {
		errs = append(errs, conditions("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if j.Spec.SuccessPolicy != nil && !successCriteriaMet && complete {
		errs = append(errs, conditions("cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return errs
}

// validateUncounted checks that the uncounted pods' UIDs are set and
// listed once.
func validateUncounted(u *batchv1.UncountedTerminatedPods, p *field.Path) field.ErrorList {
	if u == nil {
		return nil
	}
	var errs field.ErrorList
	seen := sets.New[types.UID]()
	for _, list := range []struct {
		name string
		uids []types.UID
	}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
		for i, uid := range list.uids {
			switch at := p.Child(list.name).Index(i); {
			case uid == "":
				errs = append(errs, field.Invalid(at, uid, "must not be empty"))
			case seen.Has(uid):
				errs = append(errs, field.Duplicate(at, uid))
			default:
				seen.Insert(uid)
			}
		}
	}
	return errs
}

// validateStatusIndexes checks the completed and failed indexes of an
// Indexed Job's status.
func validateStatusIndexes(j *batchv1.Job, rules statusRules, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	s, completions := &j.Status, j.Spec.Completions
	if rules.invalidCompletedIndexes && completions != nil {
		if _, err := indexesTotal(s.CompletedIndexes, *completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "error parsing completedIndexes: "+err.Error()))
		}
	}
	if rules.invalidFailedIndexes && completions != nil && j.Spec.BackoffLimitPerIndex != nil && s.FailedIndexes != nil {
		if _, err := indexesTotal(*s.FailedIndexes, *completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), s.FailedIndexes, "error parsing failedIndexes: "+err.Error()))
		}
	}
	if rules.completedIndexesNonIndexed && s.CompletedIndexes != "" && !indexed(j) {
		errs = append(errs, field.Invalid(p.Child("completedIndexes"), s.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if rules.failedIndexesNoBackoffLimitPerIndex && j.Spec.BackoffLimitPerIndex == nil && s.FailedIndexes != nil {
		errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if rules.failedOverlappingCompleted && completions != nil && s.FailedIndexes != nil {
		if err := indexesOverlap(s.CompletedIndexes, *s.FailedIndexes, *completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("failedIndexes"), *s.FailedIndexes, err.Error()))
		}
	}
	return errs
}

// indexesOverlap is upstream's validateFailedIndexesNotOverlapCompleted:
// an error naming the first index both lists hold. Intervals that do not
// parse are skipped (their format is reported apart).
func indexesOverlap(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	next := func(intervals []string, pos *int) (x, y int32, err error) {
		if *pos < len(intervals) {
			x, y, err = indexInterval(intervals[*pos], completions)
		}
		return x, y, err
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	var ci, fi int
	cx, cy, cErr := next(cs, &ci)
	fx, fy, fErr := next(fs, &fi)
	for ci < len(cs) && fi < len(fs) {
		switch {
		case cErr != nil:
			ci++
			cx, cy, cErr = next(cs, &ci)
		case fErr != nil:
			fi++
			fx, fy, fErr = next(fs, &fi)
		case cx <= fy && fx <= cy:
			return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(cx, fx))
		case cx <= fx:
			ci++
			cx, cy, cErr = next(cs, &ci)
		default:
			fi++
			fx, fy, fErr = next(fs, &fi)
		}
	}
	return nil
}

// isFinished is whether the Job is Complete or Failed.
func isFinished(j *batchv1.Job) bool {
	return hasCondition(j.Status.Conditions, batchv1.JobComplete) || hasCondition(j.Status.Conditions, batchv1.JobFailed)
}

func successCriteriaMet(j *batchv1.Job) bool {
	return hasCondition(j.Status.Conditions, batchv1.JobSuccessCriteriaMet)
}

func indexed(j *batchv1.Job) bool {
	return ptr.Deref(j.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
}
