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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

const uid = "uid-1"

// validJob returns a defaulted job (as decoding leaves it) without a selector.
func validJob() *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "default", UID: uid, ResourceVersion: "1"},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "pi", Image: "perl:5.34"}},
			}},
		},
	}
	api.Scheme.Default(j)
	return j
}

// createdJob is validJob after the job strategy's PrepareForCreate, as stored.
func createdJob(t *testing.T) *batchv1.Job {
	t.Helper()
	j := validJob()
	registrytest.REST(t, NewStorage, "jobs").CreateStrategy.PrepareForCreate(context.Background(), j)
	return j
}

func validCronJob() *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "default", UID: uid, ResourceVersion: "1"},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 3 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: "backup", Image: "restic:1"}},
				}},
			}},
		},
	}
	api.Scheme.Default(cj)
	return cj
}

// generatedLabels are the pod template labels the job strategy adds.
var generatedLabels = map[string]string{
	"job-name":                           "pi",
	"batch.kubernetes.io/job-name":       "pi",
	"controller-uid":                     uid,
	"batch.kubernetes.io/controller-uid": uid,
}

func TestStorage(t *testing.T) {
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	storages, err := NewStorage(registrytest.NewMemStorage().Options("batch"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	var names []string
	for name := range storages {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"cronjobs", "cronjobs/status", "jobs", "jobs/status"}, names); diff != "" {
		t.Fatalf("storage keys (-want +got):\n%s", diff)
	}
	tests := []struct {
		resource   string
		shortNames []string
	}{
		{resource: "jobs", shortNames: nil},
		{resource: "cronjobs", shortNames: []string{"cj"}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			store, ok := storages[tt.resource].(*registry.REST)
			if !ok {
				t.Fatalf("storage %q: got %T, want *registry.REST", tt.resource, storages[tt.resource])
			}
			status, ok := storages[tt.resource+"/status"].(*registry.StatusREST)
			if !ok {
				t.Fatalf("storage %q: got %T, want *registry.StatusREST", tt.resource+"/status", storages[tt.resource+"/status"])
			}
			if diff := cmp.Diff(tt.shortNames, store.ShortNames()); diff != "" {
				t.Errorf("ShortNames (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"all"}, store.Categories()); diff != "" {
				t.Errorf("Categories (-want +got):\n%s", diff)
			}
			if !store.NamespaceScoped() {
				t.Errorf("NamespaceScoped: got false, want true")
			}
			if got, want := store.DefaultQualifiedResource, batchv1.Resource(tt.resource); got != want {
				t.Errorf("DefaultQualifiedResource: got %v, want %v", got, want)
			}
			if diff := cmp.Diff(registry.Fieldpaths("batch/v1", "status"), store.GetResetFields(), equal); diff != "" {
				t.Errorf("reset fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(registry.Fieldpaths("batch/v1", "spec"), status.GetResetFields(), equal); diff != "" {
				t.Errorf("status reset fields (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobPrepareForCreate(t *testing.T) {
	tests := []struct {
		name         string
		job          *batchv1.Job
		wantLabels   map[string]string
		wantSelector *metav1.LabelSelector
	}{
		{
			name:         "selector generated",
			job:          validJob(),
			wantLabels:   generatedLabels,
			wantSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": uid}},
		},
		{
			name: "manualSelector unset (not defaulted): selector generated",
			job:  registrytest.Modified(validJob(), func(j *batchv1.Job) { j.Spec.ManualSelector = nil }),
			wantLabels: map[string]string{
				"job-name": "pi", "batch.kubernetes.io/job-name": "pi", "controller-uid": uid, "batch.kubernetes.io/controller-uid": uid,
			},
			wantSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": uid}},
		},
		{
			name: "template labels kept, generated ones added",
			job: registrytest.Modified(validJob(), func(j *batchv1.Job) {
				j.Spec.Template.Labels = map[string]string{"app": "pi", "job-name": "custom"}
			}),
			wantLabels: map[string]string{
				"app": "pi", "job-name": "custom", "batch.kubernetes.io/job-name": "pi", "controller-uid": uid, "batch.kubernetes.io/controller-uid": uid,
			},
			wantSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": uid}},
		},
		{
			name: "a selector without manualSelector gets the uid added",
			job: registrytest.Modified(validJob(), func(j *batchv1.Job) {
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"job-name": "pi"}}
			}),
			wantLabels:   generatedLabels,
			wantSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"job-name": "pi", "batch.kubernetes.io/controller-uid": uid}},
		},
		{
			name: "manualSelector: nothing generated",
			job: registrytest.Modified(validJob(), func(j *batchv1.Job) {
				j.Spec.ManualSelector = ptr.To(true)
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}
				j.Spec.Template.Labels = map[string]string{"app": "pi"}
			}),
			wantLabels:   map[string]string{"app": "pi"},
			wantSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}},
		},
		{
			name:         "manualSelector without a selector: nothing generated",
			job:          registrytest.Modified(validJob(), func(j *batchv1.Job) { j.Spec.ManualSelector = ptr.To(true) }),
			wantLabels:   nil,
			wantSelector: nil,
		},
	}
	strategy := registrytest.REST(t, NewStorage, "jobs").CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.job
			j.Generation = 3
			j.Status = batchv1.JobStatus{Succeeded: 2, Active: 1}
			strategy.PrepareForCreate(context.Background(), j)
			if diff := cmp.Diff(tt.wantLabels, j.Spec.Template.Labels); diff != "" {
				t.Errorf("template labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSelector, j.Spec.Selector); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(batchv1.JobStatus{}, j.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if j.Generation != 1 {
				t.Errorf("generation: got %d, want 1", j.Generation)
			}
		})
	}
}

// TestJobCreateIsValid: a job as clients send it passes validation once
// PrepareForCreate has generated its selector, as the generic store runs them.
func TestJobCreateIsValid(t *testing.T) {
	strategy := registrytest.REST(t, NewStorage, "jobs").CreateStrategy
	j := validJob()
	if got := registrytest.ErrorPaths(strategy.Validate(context.Background(), j)); !slices.Contains(got, "spec.selector: Required value") {
		t.Errorf("Validate before PrepareForCreate: got %v, want spec.selector: Required value", got)
	}
	strategy.PrepareForCreate(context.Background(), j)
	if got := registrytest.ErrorPaths(strategy.Validate(context.Background(), j)); len(got) != 0 {
		t.Errorf("Validate after PrepareForCreate: got %v, want none", got)
	}
}

func TestJobValidate(t *testing.T) {
	tests := []registrytest.Mutation[*batchv1.Job]{
		{Name: "valid", Mutate: func(*batchv1.Job) {}, Want: []string{}},
		{
			Name:   "restartPolicy OnFailure",
			Mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			Want:   []string{},
		},
		{
			Name:   "restartPolicy Always",
			Mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			Want:   []string{"spec.template.spec.restartPolicy: Required value"},
		},
		{
			Name:   "restartPolicy empty",
			Mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = "" },
			Want:   []string{"spec.template.spec.restartPolicy: Required value"},
		},
		{
			Name:   "negative parallelism",
			Mutate: func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](-1) },
			Want:   []string{"spec.parallelism: Invalid value"},
		},
		{
			Name:   "zero parallelism (a paused job)",
			Mutate: func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](0) },
			Want:   []string{},
		},
		{
			Name:   "negative completions",
			Mutate: func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](-1) },
			Want:   []string{"spec.completions: Invalid value"},
		},
		{
			Name:   "negative backoffLimit",
			Mutate: func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](-1) },
			Want:   []string{"spec.backoffLimit: Invalid value"},
		},
		{
			Name:   "negative activeDeadlineSeconds",
			Mutate: func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](-1) },
			Want:   []string{"spec.activeDeadlineSeconds: Invalid value"},
		},
		{
			Name:   "activeDeadlineSeconds 60",
			Mutate: func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			Want:   []string{},
		},
		{
			Name:   "no containers",
			Mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.Containers = nil },
			Want:   []string{"spec.template.spec.containers: Required value"},
		},
		{
			Name: "selector that does not match the template",
			Mutate: func(j *batchv1.Job) {
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "other"}}
			},
			Want: []string{"spec.template.metadata.labels: Invalid value"},
		},
		{
			Name:   "no selector (manualSelector)",
			Mutate: func(j *batchv1.Job) { j.Spec.Selector = nil },
			Want:   []string{"spec.selector: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "jobs").CreateStrategy
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			j := registrytest.Modified(createdJob(t), tt.Mutate)
			got := registrytest.ErrorPaths(strategy.Validate(context.Background(), j))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJobActiveDeadlineSecondsZero: upstream's validateJobSpec checks
// spec.activeDeadlineSeconds with ValidateNonnegativeField
// (pkg/apis/batch/validation/validation.go), so 0 is accepted (the job
// fails at once with DeadlineExceeded); only negative values are invalid.
func TestJobActiveDeadlineSecondsZero(t *testing.T) {
	strategy := registrytest.REST(t, NewStorage, "jobs").CreateStrategy
	j := registrytest.Modified(createdJob(t), func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) })
	got := registrytest.ErrorPaths(strategy.Validate(context.Background(), j))
	if diff := cmp.Diff([]string{}, got); diff != "" {
		t.Errorf("Validate errors for activeDeadlineSeconds 0 (-want +got):\n%s", diff)
	}
}

func TestJobValidateUpdate(t *testing.T) {
	suspended := func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }
	tests := []struct {
		name   string
		old    func(j *batchv1.Job)
		mutate func(j *batchv1.Job)
		want   []string
	}{
		{name: "no change", mutate: func(*batchv1.Job) {}, want: []string{}},
		{name: "parallelism may change", mutate: func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](5) }, want: []string{}},
		{name: "job may be suspended", mutate: func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }, want: []string{}},
		{
			name:   "activeDeadlineSeconds may change",
			mutate: func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](30) },
			want:   []string{},
		},
		{
			name:   "labels may change",
			mutate: func(j *batchv1.Job) { j.Labels = map[string]string{"a": "b"} },
			want:   []string{},
		},
		{
			name: "selector is immutable",
			mutate: func(j *batchv1.Job) {
				j.Spec.Selector.MatchLabels["job-name"] = "pi" // still matches the template
			},
			want: []string{"spec.selector: Invalid value"},
		},
		{
			name:   "completions are immutable",
			mutate: func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](3) },
			want:   []string{"spec.completions: Invalid value"},
		},
		{
			name:   "template is immutable",
			mutate: func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "perl:5.36" },
			want:   []string{"spec.template: Invalid value"},
		},
		{
			name:   "template is immutable when the update suspends the job",
			mutate: func(j *batchv1.Job) { suspended(j); j.Spec.Template.Spec.Containers[0].Image = "perl:5.36" },
			want:   []string{"spec.template: Invalid value"},
		},
		{
			name:   "template of a suspended job may change",
			old:    suspended,
			mutate: func(j *batchv1.Job) { suspended(j); j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"} },
			want:   []string{},
		},
		{
			name:   "a suspended job's selector is still immutable",
			old:    suspended,
			mutate: func(j *batchv1.Job) { suspended(j); j.Spec.Selector.MatchLabels["job-name"] = "pi" },
			want:   []string{"spec.selector: Invalid value"},
		},
		{
			name:   "the new object is validated",
			mutate: func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](-2) },
			want:   []string{"spec.parallelism: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "jobs").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := createdJob(t)
			if tt.old != nil {
				tt.old(old)
			}
			obj := registrytest.Modified(old, tt.mutate)
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), obj, old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobPrepareForUpdate(t *testing.T) {
	strategy := registrytest.REST(t, NewStorage, "jobs").UpdateStrategy
	old := createdJob(t)
	old.Status = batchv1.JobStatus{Active: 1}
	tests := []struct {
		name           string
		mutate         func(j *batchv1.Job)
		wantGeneration int64
	}{
		{name: "labels: generation kept", mutate: func(j *batchv1.Job) { j.Labels = map[string]string{"a": "b"} }, wantGeneration: 1},
		{name: "parallelism: generation bumped", mutate: func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }, wantGeneration: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := registrytest.Modified(old, func(j *batchv1.Job) {
				j.Status = batchv1.JobStatus{Succeeded: 1}
				tt.mutate(j)
			})
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if obj.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", obj.Generation, tt.wantGeneration)
			}
			// An update does not generate a selector again.
			if diff := cmp.Diff(old.Spec.Template.Labels, obj.Spec.Template.Labels); diff != "" {
				t.Errorf("template labels (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJobStatusUpdate runs an update through jobs/status on a MemStorage:
// the status changes, the spec is kept.
func TestJobStatusUpdate(t *testing.T) {
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("jobs"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	store, status := storages["jobs"].(*registry.REST), storages["jobs/status"].(*registry.StatusREST)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	key, err := store.KeyFunc(ctx, "pi")
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	current := mem.Seed(t, key, createdJob(t)).(*batchv1.Job)
	update := registrytest.Modified(current, func(j *batchv1.Job) {
		j.Spec.Parallelism = ptr.To[int32](9)
		j.Status = batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)}
	})
	out, _, err := status.Update(ctx, "pi", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update: got error %v, want none", err)
	}
	got := out.(*batchv1.Job)
	if diff := cmp.Diff(update.Status, got.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(current.Spec, got.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if got.Generation != 1 {
		t.Errorf("generation: got %d, want 1", got.Generation)
	}
}

func TestJobFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "jobs")
	j := registrytest.Modified(createdJob(t), func(j *batchv1.Job) { j.Status.Succeeded = 3 })
	registrytest.CheckFields(t, store, j, fields.Set{"metadata.name": "pi", "metadata.namespace": "default", "status.successful": "3"})
	cronJobs := registrytest.REST(t, NewStorage, "cronjobs")
	registrytest.CheckFields(t, cronJobs, validCronJob(), fields.Set{"metadata.name": "nightly", "metadata.namespace": "default"})
}

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
		{schedule: "* * * *", wantErr: "expected exactly 5 fields, found 4"},
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

func TestJobTable(t *testing.T) {
	now := metav1.Now()
	start := metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
	cond := func(t batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: s}
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
			name: "failed",
			mutate: func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)}
			},
			wantStatus: "Failed", wantCompletions: "0/1",
		},
		{
			name: "a false Complete condition does not count",
			mutate: func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse)}
			},
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
			name: "suspended",
			mutate: func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}
			},
			wantStatus: "Suspended", wantCompletions: "0/1",
		},
		{
			name: "failure target",
			mutate: func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue)}
			},
			wantStatus: "FailureTarget", wantCompletions: "0/1",
		},
		{
			name: "success criteria met",
			mutate: func(j *batchv1.Job) {
				j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}
			},
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
