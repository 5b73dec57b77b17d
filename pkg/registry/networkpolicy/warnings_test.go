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

package networkpolicy

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of CIDRs in non-canonical forms,
// on create and update.
func TestWarnings(t *testing.T) {
	policy := registrytest.Modified(validPolicy(), func(np *networkingv1.NetworkPolicy) {
		np.Spec.Ingress[0].From[1].IPBlock = &networkingv1.IPBlock{CIDR: "FD00::/64", Except: []string{"FD00::/96"}}
		np.Spec.Egress[0].To = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "FD01::/64"}}}
	})
	want := []string{
		`spec.ingress[0].from[1].ipBlock.cidr: IPv6 CIDR value "FD00::/64" should be in RFC 5952 canonical format ("fd00::/64")`,
		`spec.ingress[0].from[1].ipBlock.except[0]: IPv6 CIDR value "FD00::/96" should be in RFC 5952 canonical format ("fd00::/96")`,
		`spec.egress[0].to[0].ipBlock.cidr: IPv6 CIDR value "FD01::/64" should be in RFC 5952 canonical format ("fd01::/64")`,
	}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "networkpolicies"), []registrytest.WarningCase{
		{Name: "create", Obj: policy, Want: want},
		{Name: "update", Obj: policy, Old: validPolicy(), Want: want},
		{Name: "none", Obj: validPolicy()},
	})
}
