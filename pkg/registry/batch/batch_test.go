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
