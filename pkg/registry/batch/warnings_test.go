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
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: the warnings wanted are kube-apiserver 1.37's for the
// same writes.
func TestWarnings(t *testing.T) {
	nameWarning := "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"
	job := registrytest.Modified(createdJob(t), func(j *batchv1.Job) {
		j.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1500m")}
	})
	jobMemory := `spec.template.spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer`
	cronJob := registrytest.Modified(validCronJob(), func(cj *batchv1.CronJob) { cj.Spec.Schedule = "TZ=UTC 0 3 * * *" })
	tests := map[string][]registrytest.WarningCase{
		"jobs": {
			{Name: "create", Obj: registrytest.Modified(job, func(j *batchv1.Job) { j.Name = "pi.v1" }), Want: []string{nameWarning, jobMemory}},
			{Name: "indexed, of many completions", Obj: registrytest.Modified(validJob(), func(j *batchv1.Job) {
				j.Spec.CompletionMode, j.Spec.Completions, j.Spec.Parallelism = ptr.To(batchv1.IndexedCompletion), ptr.To[int32](100_001), ptr.To[int32](10_001)
			}), Want: []string{"spec: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"}},
			{Name: "spec changed", Obj: registrytest.Modified(job, func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](10) }), Old: job, Want: []string{jobMemory}},
			{Name: "labelled", Obj: registrytest.Modified(job, func(j *batchv1.Job) { j.Labels = map[string]string{"a": "b"} }), Old: job},
		},
		"cronjobs": {
			{Name: "create", Obj: registrytest.Modified(validCronJob(), func(cj *batchv1.CronJob) { cj.Name = "nightly.v1" }), Want: []string{nameWarning}},
			// A schedule with a time zone is refused once set, warned of while it stays (upstream's path, as it writes it).
			{Name: "kept a TZ schedule", Obj: registrytest.Modified(cronJob, func(cj *batchv1.CronJob) { cj.Labels = map[string]string{"a": "b"} }), Old: cronJob,
				Want: []string{"cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"}},
		},
	}
	for resource, cases := range tests {
		t.Run(resource, func(t *testing.T) { registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, resource), cases) })
	}
}
