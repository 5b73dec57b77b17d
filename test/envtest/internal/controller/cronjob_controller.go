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

package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
)

// The reasons of the Events the reconciler records.
const (
	ReasonDeploymentCreated = "DeploymentCreated"
	ReasonDeploymentUpdated = "DeploymentUpdated"
)

// LabelCronJob labels a CronJob's Deployment and its pods with the CronJob's name.
const LabelCronJob = "batch.example.com/cronjob"

// CronJobReconciler keeps, for each CronJob, a Deployment of the same name
// that runs spec.image with spec.replicas and is controlled by the CronJob,
// and records the Deployment's name and image in the CronJob's status and
// each change to the Deployment in an events.k8s.io Event.
type CronJobReconciler struct {
	Client client.Client
	Scheme *runtime.Scheme
	// Recorder is the manager's GetEventRecorder: an events.EventRecorder
	// at controller-runtime v0.23, a type embedding one at v0.25.
	Recorder events.EventRecorder
}

// SetupWithManager has mgr run the reconciler for CronJobs and the
// Deployments they own.
func (r *CronJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&batchv1.CronJob{}).
		Owns(&appsv1.Deployment{}).
		Named("cronjob").
		Complete(r)
}

// Reconcile creates or updates the CronJob's Deployment, then its status.
func (r *CronJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cj batchv1.CronJob
	if err := r.Client.Get(ctx, req.NamespacedName, &cj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cj.Namespace, Name: cj.Name}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		mutateDeployment(&cj, dep)
		return controllerutil.SetControllerReference(&cj, dep, r.Scheme)
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("deployment %s: %w", req.NamespacedName, err)
	}
	switch op {
	case controllerutil.OperationResultCreated:
		r.Recorder.Eventf(&cj, dep, corev1.EventTypeNormal, ReasonDeploymentCreated, "Reconcile", "created Deployment %s running %s", dep.Name, cj.Spec.Image)
	case controllerutil.OperationResultUpdated:
		r.Recorder.Eventf(&cj, dep, corev1.EventTypeNormal, ReasonDeploymentUpdated, "Reconcile", "updated Deployment %s to run %s", dep.Name, cj.Spec.Image)
	}
	want := batchv1.CronJobStatus{DeploymentName: dep.Name, Image: dep.Spec.Template.Spec.Containers[0].Image}
	if cj.Status == want {
		return ctrl.Result{}, nil
	}
	cj.Status = want
	if err := r.Client.Status().Update(ctx, &cj); err != nil {
		return ctrl.Result{}, fmt.Errorf("status of %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

// mutateDeployment makes dep run cj, leaving the fields the API server
// defaulted alone so that an unchanged CronJob makes no update.
func mutateDeployment(cj *batchv1.CronJob, dep *appsv1.Deployment) {
	labels := map[string]string{LabelCronJob: cj.Name}
	if dep.Labels == nil {
		dep.Labels = map[string]string{}
	}
	dep.Labels[LabelCronJob] = cj.Name
	dep.Spec.Replicas = cj.Spec.Replicas
	if dep.Spec.Selector == nil {
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	}
	dep.Spec.Template.Labels = labels
	if len(dep.Spec.Template.Spec.Containers) == 0 {
		dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "job"}}
	}
	dep.Spec.Template.Spec.Containers[0].Image = cj.Spec.Image
}
