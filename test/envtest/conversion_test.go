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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
	batchv2 "github.com/miniapiserver/miniapiserver/test/envtest/api/v2"
)

var _ = Describe("CronJob conversion webhook", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace("conversion") })

	It("serves a v1 CronJob as v2 and back, fields preserved", func() {
		By("creating as v1")
		v1 := &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   ns,
				Name:        "hub",
				Labels:      map[string]string{"team": "batch"},
				Annotations: map[string]string{"note": "created as v1"},
			},
			Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", Image: "busybox:1.36", Replicas: int32Ptr(3)},
		}
		Expect(k8sClient.Create(ctx, v1)).To(Succeed())

		key := client.ObjectKeyFromObject(v1)

		By("waiting for the reconciler's status, after which nothing else writes the CronJob")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, v1)).To(Succeed())
			g.Expect(v1.Status.Image).To(Equal("busybox:1.36"))
		}).Should(Succeed())

		By("reading as v2")
		v2 := &batchv2.CronJob{}
		Expect(k8sClient.Get(ctx, key, v2)).To(Succeed())
		Expect(v2.Spec).To(Equal(batchv2.CronJobSpec{CronSpec: "*/5 * * * *", Image: "busybox:1.36", Replicas: int32Ptr(3)}))
		Expect(v2.Status).To(Equal(batchv2.CronJobStatus{DeploymentName: "hub", Image: "busybox:1.36"}))
		Expect(v2.UID).To(Equal(v1.UID))
		Expect(v2.ResourceVersion).To(Equal(v1.ResourceVersion))
		Expect(v2.Generation).To(Equal(v1.Generation))
		Expect(v2.Labels).To(Equal(v1.Labels))
		Expect(v2.Annotations).To(Equal(v1.Annotations))

		By("reading as v2 unstructured: the field is renamed, not copied")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(batchv2.GroupVersion.WithKind("CronJob"))
		Expect(k8sClient.Get(ctx, key, u)).To(Succeed())
		Expect(u.GetAPIVersion()).To(Equal("batch.example.com/v2"))
		Expect(u.Object).To(HaveKeyWithValue("spec", HaveKeyWithValue("cronSpec", "*/5 * * * *")))
		Expect(u.Object).To(HaveKeyWithValue("spec", Not(HaveKey("schedule"))))

		By("listing as v2")
		var list batchv2.CronJobList
		Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		Expect(list.Items[0].Spec.CronSpec).To(Equal("*/5 * * * *"))

		By("updating the renamed field as v2")
		v2.Spec.CronSpec = "0 * * * *"
		Expect(k8sClient.Update(ctx, v2)).To(Succeed())
		Expect(v2.Spec.CronSpec).To(Equal("0 * * * *"))

		By("reading back as v1")
		back := &batchv1.CronJob{}
		Expect(k8sClient.Get(ctx, key, back)).To(Succeed())
		Expect(back.Spec).To(Equal(batchv1.CronJobSpec{Schedule: "0 * * * *", Image: "busybox:1.36", Replicas: int32Ptr(3)}))
		Expect(back.Status).To(Equal(v1.Status))
		Expect(back.ResourceVersion).To(Equal(v2.ResourceVersion))
		Expect(back.Labels).To(Equal(v1.Labels))
		Expect(back.Annotations).To(Equal(v1.Annotations))
	})

	It("creates as v2, admitted by the v1 webhooks through conversion", func() {
		v2 := &batchv2.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "spoke"},
			Spec:       batchv2.CronJobSpec{CronSpec: "30 2 * * 1", Image: "nginx"},
		}
		Expect(k8sClient.Create(ctx, v2)).To(Succeed())
		Expect(v2.Spec.CronSpec).To(Equal("30 2 * * 1"))
		Expect(v2.Spec.Image).To(Equal("nginx:latest"), "the v1 defaulting webhook, called for a v2 create (matchPolicy Equivalent)")
		Expect(v2.Spec.Replicas).To(HaveValue(Equal(int32(1))))

		v1 := &batchv1.CronJob{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(v2), v1)).To(Succeed())
		Expect(v1.Spec.Schedule).To(Equal("30 2 * * 1"))
		Expect(v1.Spec.Image).To(Equal("nginx:latest"))
	})

	It("watches as v2 a CronJob created as v1", func() {
		wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &batchv2.CronJobList{}, client.InNamespace(ns))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(w.Stop)

		Expect(k8sClient.Create(ctx, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "watched"},
			Spec:       batchv1.CronJobSpec{Schedule: "0 12 * * *", Image: "busybox:1.36"},
		})).To(Succeed())
		var ev watch.Event
		Eventually(w.ResultChan()).Should(Receive(&ev))
		Expect(ev.Type).To(Equal(watch.Added))
		Expect(ev.Object).To(BeAssignableToTypeOf(&batchv2.CronJob{}))
		got := ev.Object.(*batchv2.CronJob)
		Expect(got.Name).To(Equal("watched"))
		Expect(got.Spec.CronSpec).To(Equal("0 12 * * *"))
	})
})
