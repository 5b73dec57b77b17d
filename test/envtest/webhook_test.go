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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
	batchv2 "github.com/miniapiserver/miniapiserver/test/envtest/api/v2"
)

func newCronJob(ns, name, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1.CronJobSpec{Schedule: schedule, Image: "busybox"},
	}
}

var _ = Describe("CronJob admission webhooks", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace("webhook") })

	It("defaults the image tag and the replicas", func() {
		cj := newCronJob(ns, "defaulted", "* * * * *")
		Expect(k8sClient.Create(ctx, cj)).To(Succeed())
		Expect(cj.Spec.Image).To(Equal("busybox:latest"))
		Expect(cj.Spec.Replicas).To(HaveValue(Equal(int32(1))))
	})

	It("denies a schedule that is not five fields, with the validator's message", func() {
		err := k8sClient.Create(ctx, newCronJob(ns, "invalid", "@daily"))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(Equal(`admission webhook "vcronjob-v1.kb.io" denied the request: CronJob.batch.example.com "invalid" is invalid: spec.schedule: Invalid value: "@daily": must have five fields, not 1`))
	})

	It("denies an invalid v2 create with the v1 validator's message", func() {
		err := k8sClient.Create(ctx, &batchv2.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "invalid-v2"},
			Spec:       batchv2.CronJobSpec{CronSpec: "hourly", Image: "busybox"},
		})
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(Equal(`admission webhook "vcronjob-v1.kb.io" denied the request: CronJob.batch.example.com "invalid-v2" is invalid: spec.schedule: Invalid value: "hourly": must have five fields, not 1`))
	})

	It("admits a valid update and denies an invalid one", func() {
		cj := newCronJob(ns, "updated", "0 * * * *")
		Expect(k8sClient.Create(ctx, cj)).To(Succeed())
		// Merge patches: the reconciler writes the status meanwhile, so an
		// Update could meet a conflict rather than the webhook.
		patch := client.MergeFrom(cj.DeepCopy())
		cj.Spec.Schedule = "0 0 * * *"
		Expect(k8sClient.Patch(ctx, cj, patch)).To(Succeed())
		Expect(cj.Spec.Schedule).To(Equal("0 0 * * *"))

		patch = client.MergeFrom(cj.DeepCopy())
		cj.Spec.Schedule = "daily"
		err := k8sClient.Patch(ctx, cj, patch)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(HaveSuffix(`spec.schedule: Invalid value: "daily": must have five fields, not 1`))
	})
})
