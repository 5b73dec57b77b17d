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

package controllers

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// webReconciler keeps a Deployment for each ConfigMap labelled app=web,
// owned by it, and copies the Deployment's ready replicas into the
// ConfigMap's annotations: a controller that owns Deployments.
type webReconciler struct {
	client.Client
	record func(obj *corev1.ConfigMap, note string)
}

func (r *webReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	d := framework.Deployment(cm.Name, 2)
	d.Namespace = cm.Namespace
	if err := controllerutil.SetControllerReference(&cm, d, r.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Create(ctx, d); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, err
	}
	var current appsv1.Deployment
	if err := r.Get(ctx, client.ObjectKeyFromObject(d), &current); err != nil {
		return ctrl.Result{}, err
	}
	ready := fmt.Sprint(current.Status.ReadyReplicas)
	if cm.Annotations["ready"] == ready {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(cm.DeepCopy())
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations["ready"] = ready
	if err := r.Patch(ctx, &cm, patch); err != nil {
		return ctrl.Result{}, err
	}
	r.record(&cm, "ready "+ready)
	return ctrl.Result{}, nil
}

// TestControllerRuntimeOwnsDeployments runs a controller-runtime manager
// whose controller owns Deployments: its caches sync, it creates an owned
// Deployment, a status change of that Deployment reaches it through Owns,
// and its events.k8s.io recorder's Events are stored.
func TestControllerRuntimeOwnsDeployments(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	mgr, err := ctrl.NewManager(s.Config, ctrl.Options{
		Scheme:     scheme.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	recorder := mgr.GetEventRecorder("web-controller")
	r := &webReconciler{Client: mgr.GetClient(), record: func(cm *corev1.ConfigMap, note string) {
		recorder.Eventf(cm, nil, corev1.EventTypeNormal, "Synced", "Sync", "%s", note)
	}}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&appsv1.Deployment{}).Complete(r); err != nil {
		t.Fatal(err)
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the manager's caches did not sync")
	}

	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var d *appsv1.Deployment
	framework.WaitUntil(t, func() bool {
		d, err = client.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil
	}, "the controller to create the Deployment")
	if owner := metav1.GetControllerOf(d); owner == nil || owner.Kind != "ConfigMap" || owner.Name != "web" {
		t.Errorf("deployment's controller: got %+v, want ConfigMap web", owner)
	}

	// What a deployment controller would write: only Owns brings it to the reconciler.
	d.Status.Replicas, d.Status.ReadyReplicas = 2, 2
	if _, err := client.AppsV1().Deployments("default").UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && cm.Annotations["ready"] == "2"
	}, "the reconciler to see the Deployment's ready replicas")
	framework.WaitUntil(t, func() bool {
		events, err := client.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=web,reportingController=web-controller"})
		return err == nil && len(events.Items) > 0 && events.Items[len(events.Items)-1].Note != ""
	}, "the recorder's events.k8s.io Events")
}
