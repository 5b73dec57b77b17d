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

package endpointslice

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of the deprecated FQDN address type
// on create, and of IPs in forms it deprecates, unless a controller wrote them.
func TestWarnings(t *testing.T) {
	fqdn := registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
		eps.AddressType = discoveryv1.AddressTypeFQDN
		eps.Endpoints[0].Addresses, eps.Endpoints[1].Addresses = []string{"a.example.com"}, []string{"b.example.com"}
	})
	// Kept by an update, as older servers accepted it.
	legacy := registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses[0] = "010.244.1.5" })
	legacyWarning := []string{`endpoints[0].addresses[0]: non-standard IP address "010.244.1.5" is invalid: use "10.244.1.5"`}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "endpointslices"), []registrytest.WarningCase{
		{Name: "FQDN create", Obj: fqdn, Want: []string{"spec.addressType: FQDN endpoints are deprecated"}},
		{Name: "FQDN update", Obj: fqdn, Old: fqdn},
		{Name: "legacy IP kept", Obj: legacy, Old: legacy, Want: legacyWarning},
		{Name: "by the controller", Obj: registrytest.Modified(legacy, func(eps *discoveryv1.EndpointSlice) {
			eps.Labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
		}), Old: legacy},
		{Name: "none", Obj: validSlice()},
	})
}
