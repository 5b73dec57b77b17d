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

package envtest_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
	"github.com/miniapiserver/miniapiserver/test/envtest/internal/controller"
)

// eventReasons returns the reasons of the events.k8s.io Events in ns
// regarding the object with uid.
func eventReasons(g Gomega, ns string, uid types.UID) []string {
	var list eventsv1.EventList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var reasons []string
	for _, ev := range list.Items {
		if ev.Regarding.UID == uid {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons
}

var _ = Describe("CronJob reconciler", func() {
	It("makes an owned Deployment, reports it in status, and updates it", func() {
		ns := newNamespace("controller")
		cj := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
			Spec:       batchv1.CronJobSpec{Schedule: "0 3 * * *", Image: "busybox:1.36", Replicas: int32Ptr(2)},
		}
		Expect(k8sClient.Create(ctx, cj)).To(Succeed())
		key := client.ObjectKeyFromObject(cj)

		By("waiting for the Deployment")
		dep := &appsv1.Deployment{}
		Eventually(func() error { return k8sClient.Get(ctx, key, dep) }).Should(Succeed())
		Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(2))))
		Expect(dep.Spec.Template.Spec.Containers).To(HaveLen(1))
		Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.36"))
		Expect(dep.Spec.Selector.MatchLabels).To(Equal(map[string]string{controller.LabelCronJob: "nightly"}))
		Expect(dep.OwnerReferences).To(HaveLen(1))
		owner := dep.OwnerReferences[0]
		Expect(owner.APIVersion).To(Equal("batch.example.com/v1"))
		Expect(owner.Kind).To(Equal("CronJob"))
		Expect(owner.Name).To(Equal("nightly"))
		Expect(owner.UID).To(Equal(cj.UID))
		Expect(owner.Controller).To(HaveValue(BeTrue()))
		Expect(owner.BlockOwnerDeletion).To(HaveValue(BeTrue()))

		By("waiting for the status")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, cj)).To(Succeed())
			g.Expect(cj.Status).To(Equal(batchv1.CronJobStatus{DeploymentName: "nightly", Image: "busybox:1.36"}))
		}).Should(Succeed())

		By("waiting for the Event about the new Deployment")
		Eventually(func(g Gomega) {
			g.Expect(eventReasons(g, ns, cj.UID)).To(ContainElement(controller.ReasonDeploymentCreated))
		}).Should(Succeed())

		By("changing the CronJob's image and replicas")
		Eventually(func() error {
			if err := k8sClient.Get(ctx, key, cj); err != nil {
				return err
			}
			cj.Spec.Image = "busybox:1.37"
			cj.Spec.Replicas = int32Ptr(4)
			return k8sClient.Update(ctx, cj)
		}).Should(Succeed())

		By("waiting for the Deployment and the status to follow")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.37"))
			g.Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(4))))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, cj)).To(Succeed())
			g.Expect(cj.Status.Image).To(Equal("busybox:1.37"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(eventReasons(g, ns, cj.UID)).To(ContainElement(controller.ReasonDeploymentUpdated))
		}).Should(Succeed())

		By("restoring a Deployment changed behind the reconciler's back")
		Eventually(func() error {
			if err := k8sClient.Get(ctx, key, dep); err != nil {
				return err
			}
			dep.Spec.Template.Spec.Containers[0].Image = "tampered"
			return k8sClient.Update(ctx, dep)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
			g.Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal("busybox:1.37"))
		}).Should(Succeed())
	})
})
