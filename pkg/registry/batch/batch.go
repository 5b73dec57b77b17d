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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// Legacy labels upstream still puts on a Job's pod template beside the
// batch.kubernetes.io ones.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

var specPath = field.NewPath("spec")

// NewStorage returns the storage of jobs and cronjobs and their status subresources.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	jobBase := registry.NewStrategy(true)
	jobBase.OnCreate = func(obj runtime.Object) {
		if j := obj.(*batchv1.Job); j.Spec.ManualSelector == nil || !*j.Spec.ManualSelector {
			generateSelector(j)
		}
	}
	jobBase.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateJob(obj.(*batchv1.Job), nil) }
	jobBase.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateJob(obj.(*batchv1.Job), old.(*batchv1.Job))
	}
	jobBase.Warnings = jobWarnings
	jobStrategy, jobStatus := registry.SpecAndStatus{GroupVersion: "batch/v1", Generation: true, Drop: pod.TemplateDropper(func(obj runtime.Object) *corev1.PodTemplateSpec {
		return &obj.(*batchv1.Job).Spec.Template
	})}.Strategies(jobBase)
	jobStatus.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateStatusUpdate(obj.(*batchv1.Job), old.(*batchv1.Job))
	}
	jobs, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   batchv1.Resource("jobs"),
		Singular:   "job",
		Categories: []string{"all"},
		New:        func() runtime.Object { return &batchv1.Job{} },
		NewList:    func() runtime.Object { return &batchv1.JobList{} },
		Strategy:   jobStrategy,
		Fields:     func(obj runtime.Object) fields.Set { return api.JobFields(obj.(*batchv1.Job)) },
		Table:      jobTable,
	})
	if err != nil {
		return nil, err
	}

	cronBase := registry.NewStrategy(true)
	cronBase.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateCronJobCreate(obj.(*batchv1.CronJob)) }
	cronBase.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateCronJob(obj.(*batchv1.CronJob), old.(*batchv1.CronJob))
	}
	cronBase.Warnings = cronJobWarnings
	cronStrategy, cronStatus := registry.SpecAndStatus{GroupVersion: "batch/v1", Generation: true, Drop: pod.TemplateDropper(func(obj runtime.Object) *corev1.PodTemplateSpec {
		return &obj.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template
	})}.Strategies(cronBase)
	cronJobs, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   batchv1.Resource("cronjobs"),
		Singular:   "cronjob",
		ShortNames: []string{"cj"},
		Categories: []string{"all"},
		New:        func() runtime.Object { return &batchv1.CronJob{} },
		NewList:    func() runtime.Object { return &batchv1.CronJobList{} },
		Strategy:   cronStrategy,
		Table:      cronJobTable,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"jobs":            jobs,
		"jobs/status":     registry.NewStatusREST(jobs, jobStatus),
		"cronjobs":        cronJobs,
		"cronjobs/status": registry.NewStatusREST(cronJobs, cronStatus),
	}, nil
}

// generateSelector labels the pod template with the job's name and UID
// and selects the UID, as upstream's job strategy does unless
// spec.manualSelector is set.
func generateSelector(j *batchv1.Job) {
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	for _, l := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, found := j.Spec.Template.Labels[l]; !found {
			j.Spec.Template.Labels[l] = j.Name
		}
	}
	for _, l := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, found := j.Spec.Template.Labels[l]; !found {
			j.Spec.Template.Labels[l] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, found := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !found {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
}

// hasCondition is whether conditions hold t with status True.
func hasCondition(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	return hasConditionStatus(conditions, t, corev1.ConditionTrue)
}

func hasConditionStatus(conditions []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus) bool {
	for _, c := range conditions {
		if c.Type == t && c.Status == status {
			return true
		}
	}
	return false
}

// jobStatus is the STATUS column of upstream's job printer.
func jobStatus(j *batchv1.Job) string {
	switch {
	case hasCondition(j.Status.Conditions, batchv1.JobComplete):
		return "Complete"
	case hasCondition(j.Status.Conditions, batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case hasCondition(j.Status.Conditions, batchv1.JobSuspended):
		return "Suspended"
	case hasCondition(j.Status.Conditions, batchv1.JobFailureTarget):
		return "FailureTarget"
	case hasCondition(j.Status.Conditions, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

func completions(j *batchv1.Job) string {
	switch {
	case j.Spec.Completions != nil:
		return fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		return fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	}
	return fmt.Sprintf("%d/1", j.Status.Succeeded)
}

func jobDuration(j *batchv1.Job) string {
	switch {
	case j.Status.StartTime == nil:
		return ""
	case j.Status.CompletionTime == nil:
		return duration.HumanDuration(time.Since(j.Status.StartTime.Time))
	}
	return duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
}

func int64Of(v *int32) *int64 {
	if v == nil {
		return nil
	}
	return new(int64(*v))
}
