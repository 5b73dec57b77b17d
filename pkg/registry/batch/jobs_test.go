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
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

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
			// the pod spec's and the job's, as upstream
			Want: []string{"spec.template.spec.restartPolicy: Required value", "spec.template.spec.restartPolicy: Required value"},
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
			// The generated selector's check, then the template's.
			Want: []string{"spec.selector: Invalid value", "spec.template.metadata.labels: Invalid value"},
		},
		{
			Name:   "no selector (manualSelector)",
			Mutate: func(j *batchv1.Job) { j.Spec.Selector = nil },
			Want:   []string{"spec.selector: Required value", "spec.template.metadata.labels: Invalid value"},
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
