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
	"regexp"
	"strings"
	"time"
	// Time zones are checked against the IANA database compiled in, as
	// kube-apiserver does, not against whatever the host has.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// maxCronJobNameLength leaves room for the 11-character suffix the CronJob
// controller appends to name a Job (a DNS label).
const maxCronJobNameLength = 63 - 11

// validTimeZoneCharacters is one component of an IANA zone name, as upstream
// checks it before loading the zone.
var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// validateCronJobCreate is upstream's ValidateCronJobCreate: the spec, then
// a name short enough for the Jobs the controller names after it.
func validateCronJobCreate(cj *batchv1.CronJob) field.ErrorList {
	errs := validateCronJob(cj, nil)
	if len(cj.Name) > maxCronJobNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
	}
	return errs
}

// validateCronJob is upstream's validateCronJobSpec, in its order; old is
// nil on create.
func validateCronJob(cj, old *batchv1.CronJob) field.ErrorList {
	var errs field.ErrorList
	if cj.Spec.Schedule == "" {
		errs = append(errs, field.Required(specPath.Child("schedule"), ""))
	} else {
		// A schedule stored with a TZ prefix before timeZone existed stays updatable.
		allowTZ := old != nil && strings.Contains(old.Spec.Schedule, "TZ")
		errs = append(errs, validateSchedule(cj.Spec.Schedule, allowTZ, cj.Spec.TimeZone, specPath.Child("schedule"))...)
	}
	if v := cj.Spec.StartingDeadlineSeconds; v != nil && *v < 0 {
		errs = append(errs, field.Invalid(specPath.Child("startingDeadlineSeconds"), *v, "must be greater than or equal to 0"))
	}
	if old == nil || !ptr.Equal(old.Spec.TimeZone, cj.Spec.TimeZone) {
		errs = append(errs, validateTimeZone(cj.Spec.TimeZone, specPath.Child("timeZone"))...)
	}
	switch policyPath := specPath.Child("concurrencyPolicy"); cj.Spec.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(policyPath, ""))
	default:
		errs = append(errs, field.NotSupported(policyPath, cj.Spec.ConcurrencyPolicy,
			[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}))
	}
	templatePath := specPath.Child("jobTemplate", "spec")
	template := &cj.Spec.JobTemplate.Spec
	errs = append(errs, validateJobSpec(template, templatePath)...)
	if template.Selector != nil {
		errs = append(errs, field.Invalid(templatePath.Child("selector"), template.Selector, "`selector` will be auto-generated"))
	}
	if template.ManualSelector != nil && *template.ManualSelector {
		errs = append(errs, field.NotSupported(templatePath.Child("manualSelector"), template.ManualSelector, []string{"nil", "false"}))
	}
	for _, limit := range []struct {
		name  string
		value *int32
	}{
		{"successfulJobsHistoryLimit", cj.Spec.SuccessfulJobsHistoryLimit},
		{"failedJobsHistoryLimit", cj.Spec.FailedJobsHistoryLimit},
	} {
		if limit.value != nil && *limit.value < 0 {
			errs = append(errs, field.Invalid(specPath.Child(limit.name), *limit.value, "must be greater than or equal to 0"))
		}
	}
	return errs
}

// validateSchedule parses the schedule with the cron parser the CronJob
// controller uses (robfig/cron's standard one, as upstream does), then
// refuses a TZ prefix: spec.timeZone says that.
func validateSchedule(schedule string, allowTZ bool, timeZone *string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if err := parseSchedule(schedule); err != nil {
		errs = append(errs, field.Invalid(path, schedule, err.Error()))
	}
	switch hasTZ := strings.Contains(schedule, "TZ"); {
	case allowTZ && hasTZ && timeZone != nil:
		errs = append(errs, field.Invalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		errs = append(errs, field.Invalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// parseSchedule is upstream's ParseCronScheduleWithPanicRecovery: the
// parser panics on some malformed schedules ("TZ=0").
func parseSchedule(schedule string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	_, err = cron.ParseStandard(schedule)
	return err
}

// validateTimeZone is upstream's: an IANA name, not Local, that loads.
func validateTimeZone(timeZone *string, path *field.Path) field.ErrorList {
	switch {
	case timeZone == nil:
		return nil
	case *timeZone == "":
		return field.ErrorList{field.Invalid(path, timeZone, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*timeZone, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(path, timeZone, fmt.Sprintf("unknown time zone %s", *timeZone))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*timeZone, "Local") {
		errs = append(errs, field.Invalid(path, timeZone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*timeZone); err != nil {
		errs = append(errs, field.Invalid(path, timeZone, err.Error()))
	}
	return errs
}
