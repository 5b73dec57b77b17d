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

package serviceaccount

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, the deprecated
// enforce-mountable-secrets annotation is warned of when it is set, not
// while it stays.
func TestWarnings(t *testing.T) {
	plain := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "default"}}
	annotated := registrytest.Modified(plain, func(sa *corev1.ServiceAccount) {
		sa.Annotations = map[string]string{"kubernetes.io/enforce-mountable-secrets": "true"}
	})
	warning := []string{"metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "serviceaccounts"), []registrytest.WarningCase{
		{Name: "create", Obj: annotated, Want: warning},
		{Name: "set by an update", Obj: annotated, Old: plain, Want: warning},
		{Name: "kept by an update", Obj: annotated, Old: annotated},
		{Name: "none", Obj: plain},
	})
}
