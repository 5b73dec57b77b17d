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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
)

// SetupCronJobWebhookWithManager registers the CronJob defaulter and
// validator at the paths config/webhook names, and, because v1 is a hub
// with convertible spokes in mgr's scheme, the conversion webhook at /convert.
func SetupCronJobWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &batchv1.CronJob{}).
		WithDefaulter(&CronJobCustomDefaulter{}).
		WithValidator(&CronJobCustomValidator{}).
		Complete()
}

// CronJobCustomDefaulter tags an untagged image :latest and sets unset
// replicas to 1.
type CronJobCustomDefaulter struct{}

var _ admission.Defaulter[*batchv1.CronJob] = (*CronJobCustomDefaulter)(nil)

// Default implements admission.Defaulter.
func (d *CronJobCustomDefaulter) Default(_ context.Context, cj *batchv1.CronJob) error {
	if cj.Spec.Image != "" && !strings.Contains(cj.Spec.Image, ":") {
		cj.Spec.Image += ":latest"
	}
	if cj.Spec.Replicas == nil {
		one := int32(1)
		cj.Spec.Replicas = &one
	}
	return nil
}

// CronJobCustomValidator wants a five-field cron schedule.
type CronJobCustomValidator struct{}

var _ admission.Validator[*batchv1.CronJob] = (*CronJobCustomValidator)(nil)

// ValidateCreate implements admission.Validator.
func (v *CronJobCustomValidator) ValidateCreate(_ context.Context, cj *batchv1.CronJob) (admission.Warnings, error) {
	return nil, validateCronJob(cj)
}

// ValidateUpdate implements admission.Validator.
func (v *CronJobCustomValidator) ValidateUpdate(_ context.Context, _, cj *batchv1.CronJob) (admission.Warnings, error) {
	return nil, validateCronJob(cj)
}

// ValidateDelete implements admission.Validator.
func (v *CronJobCustomValidator) ValidateDelete(context.Context, *batchv1.CronJob) (admission.Warnings, error) {
	return nil, nil
}

func validateCronJob(cj *batchv1.CronJob) error {
	if n := len(strings.Fields(cj.Spec.Schedule)); n != 5 {
		return apierrors.NewInvalid(batchv1.GroupVersion.WithKind("CronJob").GroupKind(), cj.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "schedule"), cj.Spec.Schedule, fmt.Sprintf("must have five fields, not %d", n)),
		})
	}
	return nil
}
