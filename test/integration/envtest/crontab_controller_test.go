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

package envtest

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var cronTabKind = schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}

func newCronTab() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(cronTabKind)
	return u
}

// CronTabReconciler marks each CronTab it sees with the annotation
// reconciled=true: a controller of a custom resource, as a kubebuilder
// project has one.
type CronTabReconciler struct {
	client.Client
}

func (r *CronTabReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ct := newCronTab()
	if err := r.Get(ctx, req.NamespacedName, ct); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ct.GetAnnotations()["reconciled"] == "true" {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(ct.DeepCopy())
	ct.SetAnnotations(map[string]string{"reconciled": "true"})
	return ctrl.Result{}, r.Patch(ctx, ct, patch)
}

func (r *CronTabReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(newCronTab()).Named("crontab").Complete(r)
}

var _ = Describe("CronTab Controller", func() {
	It("reconciles a CronTab created after the suite started", func() {
		ct := newCronTab()
		ct.SetName("nightly")
		ct.SetNamespace("default")
		ct.Object["spec"] = map[string]any{"image": "busybox", "replicas": int64(1)}
		Expect(k8sClient.Create(ctx, ct)).To(Succeed())

		Eventually(func(g Gomega) {
			got := newCronTab()
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "default", Name: "nightly"}, got)).To(Succeed())
			g.Expect(got.GetAnnotations()).To(HaveKeyWithValue("reconciled", "true"))
		}, 30*time.Second, 10*time.Millisecond).Should(Succeed())
	})

	It("serves the built-in namespaces", func() {
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "kube-system"}, &metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		})).To(Succeed())
	})
})
