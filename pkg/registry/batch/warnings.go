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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// The warnings kube-apiserver sends for Jobs and CronJobs: on create, of
// the name and the job spec; on an update, of the job spec if the
// generation changed (and of a time zone in a CronJob's schedule).

func jobWarnings(obj, old runtime.Object) []string {
	j := obj.(*batchv1.Job)
	if old == nil {
		return append(pod.NameWarnings(j.Name), jobSpecWarnings(specPath, &j.Spec)...)
	}
	if j.Generation != old.(*batchv1.Job).Generation {
		return jobSpecWarnings(specPath, &j.Spec)
	}
	return nil
}

func cronJobWarnings(obj, old runtime.Object) []string {
	cj := obj.(*batchv1.CronJob)
	jobSpecPath := specPath.Child("jobTemplate", "spec")
	if old == nil {
		return append(pod.NameWarnings(cj.Name), jobSpecWarnings(jobSpecPath, &cj.Spec.JobTemplate.Spec)...)
	}
	var warnings []string
	if cj.Generation != old.(*batchv1.CronJob).Generation {
		warnings = jobSpecWarnings(jobSpecPath, &cj.Spec.JobTemplate.Spec)
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") { // upstream's path, spec.spec.schedule, as it writes it
		warnings = append(warnings, fmt.Sprintf("cannot use TZ or CRON_TZ in %s, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", specPath.Child("spec", "schedule")))
	}
	return warnings
}

// jobSpecWarnings is upstream's WarningsForJobSpec.
func jobSpecWarnings(path *field.Path, spec *batchv1.JobSpec) []string {
	var warnings []string
	if ptr.Deref(spec.CompletionMode, "") == batchv1.IndexedCompletion &&
		ptr.Deref(spec.Completions, 0) > 100_000 && ptr.Deref(spec.Parallelism, 0) > 10_000 {
		warnings = append(warnings, fmt.Sprintf("%s: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail", path))
	}
	return append(warnings, pod.TemplateWarnings(path.Child("template"), &spec.Template)...)
}
