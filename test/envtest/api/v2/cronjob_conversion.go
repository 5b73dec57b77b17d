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
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/conversion"

	batchv1 "github.com/miniapiserver/miniapiserver/test/envtest/api/v1"
)

var _ conversion.Convertible = (*CronJob)(nil)

// ConvertTo converts this v2 CronJob to the v1 hub.
func (src *CronJob) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*batchv1.CronJob)
	if !ok {
		return fmt.Errorf("convert to %T: want a *v1.CronJob", dstRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec = batchv1.CronJobSpec{
		Schedule: src.Spec.CronSpec,
		Image:    src.Spec.Image,
		Replicas: src.Spec.Replicas,
	}
	dst.Status = batchv1.CronJobStatus(src.Status)
	return nil
}

// ConvertFrom converts the v1 hub to this v2 CronJob.
func (dst *CronJob) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*batchv1.CronJob)
	if !ok {
		return fmt.Errorf("convert from %T: want a *v1.CronJob", srcRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec = CronJobSpec{
		CronSpec: src.Spec.Schedule,
		Image:    src.Spec.Image,
		Replicas: src.Spec.Replicas,
	}
	dst.Status = CronJobStatus(src.Status)
	return nil
}
