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

package persistentvolumeclaim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of the deprecated storage class
// annotation and of a fraction of a byte.
func TestWarnings(t *testing.T) {
	pvc := registrytest.Modified(validPVC(), func(pvc *corev1.PersistentVolumeClaim) {
		pvc.Annotations = map[string]string{corev1.BetaStorageClassAnnotation: "fast"}
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1500m")
	})
	want := []string{
		`metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
		`spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer`,
	}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "persistentvolumeclaims"), []registrytest.WarningCase{
		{Name: "create", Obj: pvc, Want: want},
		{Name: "update", Obj: pvc, Old: pvc, Want: want},
		{Name: "none", Obj: validPVC()},
	})
}
