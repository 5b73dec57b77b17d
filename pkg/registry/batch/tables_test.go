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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestJobTable(t *testing.T) {
	now := metav1.Now()
	start := metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	cond := func(t batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: s}
	}
	// withConditions is a mutation that sets only the conditions.
	withConditions := func(cs ...batchv1.JobCondition) func(*batchv1.Job) {
		return func(j *batchv1.Job) { j.Status.Conditions = cs }
	}
	tests := []struct {
		name            string
		mutate          func(j *batchv1.Job)
		wantStatus      string
		wantCompletions string
		wantDuration    string
	}{
		{name: "new job", mutate: func(*batchv1.Job) {}, wantStatus: "Running", wantCompletions: "0/1"},
		{
			name: "complete, 90s",
			mutate: func(j *batchv1.Job) {
				j.Status = batchv1.JobStatus{
					Succeeded: 1, StartTime: &start, CompletionTime: ptr.To(metav1.NewTime(start.Add(90 * time.Second))),
					Conditions: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)},
				}
			},
			wantStatus: "Complete", wantCompletions: "1/1", wantDuration: "90s",
		},
		{
			name: "running for 10 days",
			mutate: func(j *batchv1.Job) {
				j.Status = batchv1.JobStatus{StartTime: &start, Active: 1}
			},
			wantStatus: "Running", wantCompletions: "0/1", wantDuration: "10d",
		},
		{
			name:       "failed",
			mutate:     withConditions(cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)),
			wantStatus: "Failed", wantCompletions: "0/1",
		},
		{
			name:       "a false Complete condition does not count",
			mutate:     withConditions(cond(batchv1.JobComplete, corev1.ConditionFalse)),
			wantStatus: "Running", wantCompletions: "0/1",
		},
		{
			name: "terminating",
			mutate: func(j *batchv1.Job) {
				j.DeletionTimestamp = &now
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}
			},
			wantStatus: "Terminating", wantCompletions: "0/1",
		},
		{
			name: "complete wins over terminating",
			mutate: func(j *batchv1.Job) {
				j.DeletionTimestamp = &now
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionTrue)}
			},
			wantStatus: "Complete", wantCompletions: "0/1",
		},
		{
			name:       "suspended",
			mutate:     withConditions(cond(batchv1.JobSuspended, corev1.ConditionTrue)),
			wantStatus: "Suspended", wantCompletions: "0/1",
		},
		{
			name:       "failure target",
			mutate:     withConditions(cond(batchv1.JobFailureTarget, corev1.ConditionTrue)),
			wantStatus: "FailureTarget", wantCompletions: "0/1",
		},
		{
			name:       "success criteria met",
			mutate:     withConditions(cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)),
			wantStatus: "SuccessCriteriaMet", wantCompletions: "0/1",
		},
		{
			name: "completions",
			mutate: func(j *batchv1.Job) {
				j.Spec.Completions = ptr.To[int32](5)
				j.Status.Succeeded = 2
			},
			wantStatus: "Running", wantCompletions: "2/5",
		},
		{
			name: "work queue: parallelism without completions",
			mutate: func(j *batchv1.Job) {
				j.Spec.Completions, j.Spec.Parallelism = nil, ptr.To[int32](4)
				j.Status.Succeeded = 1
			},
			wantStatus: "Running", wantCompletions: "1/1 of 4",
		},
		{
			name: "parallelism 1 without completions",
			mutate: func(j *batchv1.Job) {
				j.Spec.Completions, j.Spec.Parallelism = nil, ptr.To[int32](1)
			},
			wantStatus: "Running", wantCompletions: "0/1",
		},
		{
			name: "neither completions nor parallelism",
			mutate: func(j *batchv1.Job) {
				j.Spec.Completions, j.Spec.Parallelism = nil, nil
			},
			wantStatus: "Running", wantCompletions: "0/1",
		},
	}
	store := registrytest.REST(t, NewStorage, "jobs")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := registrytest.Modified(createdJob(t), tt.mutate)
			table, err := store.ConvertToTable(context.Background(), j, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			want := []any{"pi", tt.wantStatus, tt.wantCompletions, tt.wantDuration, "<unknown>", "pi", "perl:5.34", "batch.kubernetes.io/controller-uid=uid-1"}
			if diff := cmp.Diff(want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCronJobTable(t *testing.T) {
	lastSchedule := metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	tests := []struct {
		name   string
		mutate func(cj *batchv1.CronJob)
		want   []any
	}{
		{
			name:   "defaulted",
			mutate: func(*batchv1.CronJob) {},
			// Upstream prints the job template's selector with
			// metav1.FormatLabelSelector: "<none>" for none.
			want: []any{"nightly", "0 3 * * *", "<none>", "False", int64(0), "<none>", "<unknown>", "backup", "restic:1", "<none>"},
		},
		{
			name: "suspended, with a time zone, active jobs and a selector",
			mutate: func(cj *batchv1.CronJob) {
				cj.Spec.TimeZone = ptr.To("Europe/Berlin")
				cj.Spec.Suspend = ptr.To(true)
				cj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "backup"}}
				cj.Status = batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}, LastScheduleTime: &lastSchedule}
			},
			want: []any{"nightly", "0 3 * * *", "Europe/Berlin", "True", int64(2), "10d", "<unknown>", "backup", "restic:1", "app=backup"},
		},
		{
			name: "suspend unset",
			mutate: func(cj *batchv1.CronJob) {
				cj.Spec.Suspend = nil
				cj.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "backup"}}
			},
			want: []any{"nightly", "0 3 * * *", "<none>", "<unset>", int64(0), "<none>", "<unknown>", "backup", "restic:1", "app=backup"},
		},
	}
	store := registrytest.REST(t, NewStorage, "cronjobs")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), registrytest.Modified(validCronJob(), tt.mutate), nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			wantColumns := []string{"Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers", "Images", "Selector"}
			if diff := cmp.Diff(wantColumns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
