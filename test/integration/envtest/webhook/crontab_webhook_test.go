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

package webhook

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// SetupCronTabWebhookWithManager registers the CronTab defaulter and
// validator, as a kubebuilder project's internal/webhook/v1 does.
func SetupCronTabWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &CronTab{}).
		WithDefaulter(&CronTabCustomDefaulter{}).
		WithValidator(&CronTabCustomValidator{}).
		Complete()
}

// CronTabCustomDefaulter tags an untagged image :latest.
type CronTabCustomDefaulter struct{}

func (d *CronTabCustomDefaulter) Default(_ context.Context, ct *CronTab) error {
	if ct.Spec.Image != "" && !strings.Contains(ct.Spec.Image, ":") {
		ct.Spec.Image += ":latest"
	}
	return nil
}

// CronTabCustomValidator wants a five-field cron schedule.
type CronTabCustomValidator struct{}

func (v *CronTabCustomValidator) ValidateCreate(_ context.Context, ct *CronTab) (admission.Warnings, error) {
	return nil, validateCronTab(ct)
}

func (v *CronTabCustomValidator) ValidateUpdate(_ context.Context, _, ct *CronTab) (admission.Warnings, error) {
	return nil, validateCronTab(ct)
}

func (v *CronTabCustomValidator) ValidateDelete(context.Context, *CronTab) (admission.Warnings, error) {
	return nil, nil
}

func validateCronTab(ct *CronTab) error {
	if n := len(strings.Fields(ct.Spec.CronSpec)); n != 5 {
		return apierrors.NewInvalid(GroupVersion.WithKind("CronTab").GroupKind(), ct.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "cronSpec"), ct.Spec.CronSpec, fmt.Sprintf("must have five fields, not %d", n)),
		})
	}
	return nil
}

func newCronTab(name, schedule string) *CronTab {
	return &CronTab{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       CronTabSpec{CronSpec: schedule, Image: "busybox"},
	}
}

var _ = Describe("CronTab Webhook", func() {
	It("defaults the image tag", func() {
		ct := newCronTab("defaulted", "* * * * *")
		Expect(k8sClient.Create(ctx, ct)).To(Succeed())
		Expect(ct.Spec.Image).To(Equal("busybox:latest"))
	})

	It("denies a schedule that is not five fields, with the validator's message", func() {
		err := k8sClient.Create(ctx, newCronTab("invalid", "@daily"))
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(Equal(`admission webhook "vcrontab-v1.kb.io" denied the request: CronTab.stable.example.com "invalid" is invalid: spec.cronSpec: Invalid value: "@daily": must have five fields, not 1`))
	})

	It("admits a valid update and denies an invalid one", func() {
		ct := newCronTab("updated", "0 * * * *")
		Expect(k8sClient.Create(ctx, ct)).To(Succeed())
		ct.Spec.CronSpec = "hourly"
		Expect(apierrors.IsInvalid(k8sClient.Update(ctx, ct))).To(BeTrue())
	})
})
