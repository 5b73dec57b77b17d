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
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The tables are upstream's printers (pkg/printers/internalversion) for these types.

var jobTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: "The desired number of successfully finished pods the job should be run with."},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn, registry.SelectorColumn,
	},
	Cells: func(obj runtime.Object) []any {
		j := obj.(*batchv1.Job)
		containers, images := registry.ContainersAndImages(&j.Spec.Template)
		return []any{j.Name, jobStatus(j), completions(j), jobDuration(j), registry.Age(j.CreationTimestamp), containers, images, metav1.FormatLabelSelector(j.Spec.Selector)}
	},
}

var cronJobTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Schedule", Type: "string", Description: "The schedule in Cron format."},
		{Name: "Timezone", Type: "string", Description: "The time zone name for the given schedule."},
		{Name: "Suspend", Type: "boolean", Description: "Whether subsequent executions are suspended."},
		{Name: "Active", Type: "integer", Description: "A list of pointers to currently running jobs."},
		{Name: "Last Schedule", Type: "string", Description: "Information when was the last time the job was successfully scheduled."},
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn, registry.SelectorColumn,
	},
	Cells: func(obj runtime.Object) []any {
		cj := obj.(*batchv1.CronJob)
		containers, images := registry.ContainersAndImages(&cj.Spec.JobTemplate.Spec.Template)
		timeZone, lastSchedule := "<none>", "<none>"
		if cj.Spec.TimeZone != nil {
			timeZone = *cj.Spec.TimeZone
		}
		if cj.Status.LastScheduleTime != nil {
			lastSchedule = registry.Age(*cj.Status.LastScheduleTime)
		}
		suspend := "<unset>"
		if cj.Spec.Suspend != nil {
			suspend = "False"
			if *cj.Spec.Suspend {
				suspend = "True"
			}
		}
		return []any{cj.Name, cj.Spec.Schedule, timeZone, suspend, int64(len(cj.Status.Active)), lastSchedule,
			registry.Age(cj.CreationTimestamp), containers, images, metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector)}
	},
}
