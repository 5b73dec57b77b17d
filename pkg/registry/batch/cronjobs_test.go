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
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestValidateSchedule(t *testing.T) {
	tests := []struct {
		schedule string
		allowTZ  bool
		timeZone *string
		// want are the messages, upstream's words (robfig/cron's parser's).
		want []string
	}{
		{schedule: "TZ=UTC * * * * *", want: []string{"cannot use TZ or CRON_TZ in schedule, use timeZone field instead"}},
		{schedule: "CRON_TZ=Europe/Berlin 0 3 * * *", want: []string{"cannot use TZ or CRON_TZ in schedule, use timeZone field instead"}},
		{schedule: "TZ=UTC * * * * *", allowTZ: true},
		{schedule: "TZ=UTC * * * * *", allowTZ: true, timeZone: ptr.To("UTC"), want: []string{"cannot use both timeZone field and TZ or CRON_TZ in schedule"}},
		{schedule: "TZ=0", want: []string{"invalid schedule format: runtime error: slice bounds out of range", "cannot use TZ"}},
		{schedule: "@every 5m"},
		{schedule: "@every 1h30m"},
		{schedule: "@every x", want: []string{`failed to parse duration @every x: time: invalid duration "x"`}},
		{schedule: "@hourly"},
		{schedule: "@annually"},
		{schedule: "@midnight"},
		{schedule: "@bogus", want: []string{"unrecognized descriptor: @bogus"}},
		{schedule: "* * * *", want: []string{"expected exactly 5 fields, found 4: [* * * *]"}},
		{schedule: "0 * * * * *", want: []string{"expected exactly 5 fields, found 6: [0 * * * * *]"}},
		{schedule: "0 99 * * *", want: []string{"end of range (99) above maximum (23): 99"}},
		{schedule: "*/5 * * * *"},
		{schedule: "0 0 * * 1-5"},
		{schedule: "  0   3 * *  *  "},
	}
	for _, tt := range tests {
		t.Run(tt.schedule, func(t *testing.T) {
			errs := validateSchedule(tt.schedule, tt.allowTZ, tt.timeZone, specPath.Child("schedule"))
			if len(errs) != len(tt.want) {
				t.Fatalf("validateSchedule(%q): got %v, want %d errors %q", tt.schedule, errs, len(tt.want), tt.want)
			}
			for i, err := range errs {
				if !strings.Contains(err.Detail, tt.want[i]) {
					t.Errorf("validateSchedule(%q) error %d: got %q, want it to contain %q", tt.schedule, i, err.Detail, tt.want[i])
				}
			}
		})
	}
}

func TestCronJobValidate(t *testing.T) {
	tests := []registrytest.Mutation[*batchv1.CronJob]{
		{Name: "valid", Mutate: func(*batchv1.CronJob) {}, Want: []string{}},
		{Name: "no schedule", Mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "" }, Want: []string{"spec.schedule: Required value"}},
		{Name: "bad schedule", Mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "* * *" }, Want: []string{"spec.schedule: Invalid value"}},
		{
			Name:   "negative startingDeadlineSeconds",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			Want:   []string{"spec.startingDeadlineSeconds: Invalid value"},
		},
		{Name: "time zone", Mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Berlin") }, Want: []string{}},
		{Name: "empty time zone", Mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("") }, Want: []string{"spec.timeZone: Invalid value"}},
		{Name: "unknown time zone", Mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus") }, Want: []string{"spec.timeZone: Invalid value"}},
		{Name: "Local time zone", Mutate: func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Local") }, Want: []string{"spec.timeZone: Invalid value"}},
		{
			Name:   "job template with a selector",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{} },
			Want:   []string{"spec.jobTemplate.spec.selector: Invalid value"},
		},
		{
			Name:   "job template with manualSelector",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.JobTemplate.Spec.ManualSelector = ptr.To(true) },
			Want:   []string{"spec.jobTemplate.spec.manualSelector: Unsupported value"},
		},
		{
			Name:   "job template with a negative backoffLimit",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.JobTemplate.Spec.BackoffLimit = ptr.To[int32](-1) },
			Want:   []string{"spec.jobTemplate.spec.backoffLimit: Invalid value"},
		},
		{Name: "TZ in schedule", Mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 0 3 * * *" }, Want: []string{"spec.schedule: Invalid value"}},
		{
			Name:   "concurrencyPolicy Forbid",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent },
			Want:   []string{},
		},
		{
			Name:   "concurrencyPolicy Replace",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = batchv1.ReplaceConcurrent },
			Want:   []string{},
		},
		{
			Name:   "unknown concurrencyPolicy",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.ConcurrencyPolicy = "Sometimes" },
			Want:   []string{"spec.concurrencyPolicy: Unsupported value"},
		},
		{
			Name: "job template that restarts Always",
			Mutate: func(cj *batchv1.CronJob) {
				cj.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
			},
			Want: []string{"spec.jobTemplate.spec.template.spec.restartPolicy: Required value"},
		},
		{
			Name:   "job template without containers",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.JobTemplate.Spec.Template.Spec.Containers = nil },
			Want:   []string{"spec.jobTemplate.spec.template.spec.containers: Required value"},
		},
		{
			Name:   "negative successfulJobsHistoryLimit",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](-1) },
			Want:   []string{"spec.successfulJobsHistoryLimit: Invalid value"},
		},
		{
			Name:   "negative failedJobsHistoryLimit",
			Mutate: func(cj *batchv1.CronJob) { cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1) },
			Want:   []string{"spec.failedJobsHistoryLimit: Invalid value"},
		},
		{
			Name: "zero history limits",
			Mutate: func(cj *batchv1.CronJob) {
				cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](0), ptr.To[int32](0)
			},
			Want: []string{},
		},
	}
	store := registrytest.REST(t, NewStorage, "cronjobs")
	registrytest.ValidateMutationsCreateAndUpdate(t, store, registrytest.ErrorPaths, validCronJob, tests)
}

// The errors come in upstream's order, the same on every call (the history
// limits were once checked in Go's random map order).
func TestCronJobErrorOrder(t *testing.T) {
	cj := registrytest.Modified(validCronJob(), func(cj *batchv1.CronJob) {
		cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1), ptr.To[int32](-1)
		cj.Spec.ConcurrencyPolicy = "Sometimes"
		cj.Spec.StartingDeadlineSeconds = ptr.To[int64](-1)
		cj.Spec.Schedule = "* *"
	})
	want := []string{"spec.schedule", "spec.startingDeadlineSeconds", "spec.concurrencyPolicy", "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit"}
	for range 10 {
		var got []string
		for _, err := range validateCronJob(cj, nil) {
			got = append(got, err.Field)
		}
		if !cmp.Equal(got, want) {
			t.Fatalf("error fields: got %q, want %q", got, want)
		}
	}
}

// A name longer than 52 characters is refused on create only: old CronJobs
// with longer names stay updatable, as upstream.
func TestCronJobNameLength(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "cronjobs")
	long := registrytest.Modified(validCronJob(), func(cj *batchv1.CronJob) { cj.Name = strings.Repeat("a", 53) })
	got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), long))
	if want := []string{`metadata.name: Invalid value: "` + long.Name + `": must be no more than 52 characters`}; !cmp.Equal(got, want) {
		t.Errorf("create with a 53-character name: got %q, want %q", got, want)
	}
	if got := store.UpdateStrategy.ValidateUpdate(context.Background(), long, long); len(got) != 0 {
		t.Errorf("update with a 53-character name: got %v, want no errors", got)
	}
	fits := registrytest.Modified(validCronJob(), func(cj *batchv1.CronJob) { cj.Name = strings.Repeat("a", 52) })
	if got := store.CreateStrategy.Validate(context.Background(), fits); len(got) != 0 {
		t.Errorf("create with a 52-character name: got %v, want no errors", got)
	}
}

func TestCronJobPrepare(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "cronjobs")
	now := metav1.Now()
	cj := registrytest.Modified(validCronJob(), func(cj *batchv1.CronJob) {
		cj.Status = batchv1.CronJobStatus{LastScheduleTime: &now}
		cj.Generation = 4
	})
	store.CreateStrategy.PrepareForCreate(context.Background(), cj)
	if diff := cmp.Diff(batchv1.CronJobStatus{}, cj.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if cj.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", cj.Generation)
	}
	// PrepareForCreate generates no selector for a cronjob's job template.
	if cj.Spec.JobTemplate.Spec.Selector != nil || cj.Spec.JobTemplate.Spec.Template.Labels != nil {
		t.Errorf("job template after PrepareForCreate: got selector %v and labels %v, want none", cj.Spec.JobTemplate.Spec.Selector, cj.Spec.JobTemplate.Spec.Template.Labels)
	}

	old := registrytest.Modified(cj, func(cj *batchv1.CronJob) { cj.Status = batchv1.CronJobStatus{LastScheduleTime: &now} })
	obj := registrytest.Modified(old, func(cj *batchv1.CronJob) {
		cj.Status = batchv1.CronJobStatus{}
		cj.Spec.Schedule = "@hourly"
	})
	store.UpdateStrategy.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
	}
	if obj.Generation != 2 {
		t.Errorf("generation after a schedule change: got %d, want 2", obj.Generation)
	}
}
