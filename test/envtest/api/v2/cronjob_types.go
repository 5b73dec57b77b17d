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

package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronJobSpec is the desired state of a CronJob.
type CronJobSpec struct {
	// CronSpec is a five-field cron schedule; v1 calls it schedule.
	CronSpec string `json:"cronSpec"`
	// Image is the container image the CronJob's Deployment runs.
	Image string `json:"image"`
	// Replicas is the Deployment's replica count.
	Replicas *int32 `json:"replicas,omitempty"`
}

// CronJobStatus is the observed state of a CronJob, written by the reconciler.
type CronJobStatus struct {
	// DeploymentName names the Deployment the reconciler made.
	DeploymentName string `json:"deploymentName,omitempty"`
	// Image is the image the reconciler last gave that Deployment.
	Image string `json:"image,omitempty"`
}

// CronJob runs an image on a schedule.
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronJobSpec   `json:"spec,omitempty"`
	Status CronJobStatus `json:"status,omitempty"`
}

// CronJobList is a list of CronJobs.
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronJob `json:"items"`
}
