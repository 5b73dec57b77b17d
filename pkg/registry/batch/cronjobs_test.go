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

func TestCheckSchedule(t *testing.T) {
	tests := []struct {
		schedule string
		// wantErr is a part of the message, or "" for a valid schedule.
		wantErr string
	}{
		{schedule: "", wantErr: "empty"},
		{schedule: "TZ=UTC * * * * *", wantErr: "timeZone"},
		{schedule: "CRON_TZ=Europe/Berlin 0 3 * * *", wantErr: "timeZone"},
		{schedule: "@every 5m", wantErr: ""},
		{schedule: "@every 1h30m", wantErr: ""},
		{schedule: "@every x", wantErr: "duration"},
		{schedule: "@hourly", wantErr: ""},
		{schedule: "@yearly", wantErr: ""},
		{schedule: "@annually", wantErr: ""},
		{schedule: "@monthly", wantErr: ""},
		{schedule: "@weekly", wantErr: ""},
		{schedule: "@daily", wantErr: ""},
		{schedule: "@midnight", wantErr: ""},
		{schedule: "@bogus", wantErr: "unrecognized descriptor"},
		{schedule: "* * * *", wantErr: "expected exactly 5 fields, found 4: [* * * *]"}, // upstream's words
		{schedule: "0 * * * * *", wantErr: "expected exactly 5 fields, found 6"},
		{schedule: "*/5 * * * *", wantErr: ""},
		{schedule: "0 0 * * 1-5", wantErr: ""},
		{schedule: "  0   3 * *  *  ", wantErr: ""},
	}
	for _, tt := range tests {
		t.Run(tt.schedule, func(t *testing.T) {
			got := checkSchedule(tt.schedule)
			switch {
			case tt.wantErr == "" && got != "":
				t.Errorf("checkSchedule(%q): got %q, want valid", tt.schedule, got)
			case tt.wantErr != "" && !strings.Contains(got, tt.wantErr):
				t.Errorf("checkSchedule(%q): got %q, want a message containing %q", tt.schedule, got, tt.wantErr)
			}
		})
	}
}

func TestCronJobValidate(t *testing.T) {
	tests := []registrytest.Mutation[*batchv1.CronJob]{
		{Name: "valid", Mutate: func(*batchv1.CronJob) {}, Want: []string{}},
		{Name: "bad schedule", Mutate: func(cj *batchv1.CronJob) { cj.Spec.Schedule = "* * *" }, Want: []string{"spec.schedule: Invalid value"}},
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
