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

package endpoints

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of IPv6 addresses not in canonical
// form, unless the endpoints controller wrote them.
func TestWarnings(t *testing.T) {
	ep := registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
		ep.Subsets[0].Addresses[1].IP, ep.Subsets[0].NotReadyAddresses[0].IP = "FD00::7", "FD00::9"
	})
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "endpoints"), []registrytest.WarningCase{
		{Name: "create", Obj: ep, Want: []string{
			`subsets[0].addresses[1].ip: IPv6 address "FD00::7" should be in RFC 5952 canonical format ("fd00::7")`,
			`subsets[0].notReadyAddresses[0].ip: IPv6 address "FD00::9" should be in RFC 5952 canonical format ("fd00::9")`,
		}},
		{Name: "by the controller", Obj: registrytest.Modified(ep, func(ep *corev1.Endpoints) {
			ep.Labels = map[string]string{"endpoints.kubernetes.io/managed-by": "endpoint-controller"}
		})},
		{Name: "none", Obj: validEndpoints()},
	})
}
