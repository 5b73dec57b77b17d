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

package ingress

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, the deprecated class annotation
// without spec.ingressClassName is warned of on create only.
func TestWarnings(t *testing.T) {
	annotated := registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
		ing.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
		ing.Spec.IngressClassName = nil
	})
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "ingresses"), []registrytest.WarningCase{
		{Name: "create", Obj: annotated, Want: []string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}},
		{Name: "update", Obj: annotated, Old: annotated},
		{Name: "with the class name too", Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
			ing.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
		})},
	})
}
