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

package service

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestInitFamilies: before allocating, a Service's policy and families are
// set as upstream's initIPFamilyFields sets them on an IPv4 single-stack
// cluster, and what it refuses is refused in its words.
func TestInitFamilies(t *testing.T) {
	single, prefer, require := corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	svc := func(ips []string, policy *corev1.IPFamilyPolicy, families ...corev1.IPFamily) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "web"}, ClusterIPs: ips, IPFamilyPolicy: policy, IPFamilies: families}}
		if len(ips) > 0 {
			s.Spec.ClusterIP = ips[0]
		}
		return s
	}
	selectorless := func(s *corev1.Service) *corev1.Service { s.Spec.Selector = nil; return s }
	tests := []struct {
		name         string
		old, svc     *corev1.Service
		wantPolicy   corev1.IPFamilyPolicy
		wantFamilies []corev1.IPFamily
		wantIPs      []string
		wantErr      string
	}{
		{name: "nothing asked", svc: svc(nil, nil), wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}},
		{name: "an IPv4 address", svc: svc([]string{"10.0.0.5"}, nil), wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}, wantIPs: []string{"10.0.0.5"}},
		{name: "PreferDualStack kept", svc: svc(nil, &prefer), wantPolicy: prefer, wantFamilies: []corev1.IPFamily{v4}},
		{name: "headless", svc: svc([]string{"None"}, nil), wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}, wantIPs: []string{"None"}},
		{name: "headless and selectorless: both families", svc: selectorless(svc([]string{"None"}, nil)), wantPolicy: require, wantFamilies: []corev1.IPFamily{v4, v6}, wantIPs: []string{"None"}},
		{name: "headless and selectorless, single stack", svc: selectorless(svc([]string{"None"}, &single)), wantPolicy: single, wantFamilies: []corev1.IPFamily{v4}, wantIPs: []string{"None"}},
		{name: "an update keeps the old policy", old: svc([]string{"10.0.0.5"}, &prefer, v4), svc: svc([]string{"10.0.0.5"}, nil, v4),
			wantPolicy: prefer, wantFamilies: []corev1.IPFamily{v4}, wantIPs: []string{"10.0.0.5"}},
		{name: "an ExternalName service is left alone", svc: &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}},
		{name: "RequireDualStack", svc: svc(nil, &require),
			wantErr: `Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{name: "IPv6", svc: svc(nil, nil, v6),
			wantErr: `Service "web" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`},
		{name: "an IPv6 address", svc: svc([]string{"fd00::5"}, nil),
			wantErr: `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["fd00::5"]: IPv6 is not configured on this cluster`},
		{name: "two addresses, single stack", svc: svc([]string{"10.0.0.5", "fd00::5"}, &single),
			wantErr: `Service "web" is invalid: [spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified, spec.clusterIPs[1]: Invalid value: ["10.0.0.5","fd00::5"]: IPv6 is not configured on this cluster]`},
		{name: "two IPv4 addresses: validation's error alone", svc: svc([]string{"10.0.0.5", "10.0.0.6"}, &prefer),
			wantErr: `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5","10.0.0.6"]: may specify no more than one IP for each IP family`},
		{name: "the secondary family released, not single stack", old: svc(nil, &prefer, v4, v6), svc: svc(nil, &prefer, v4),
			wantErr: `Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary IP family`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := initFamilies(tt.svc, tt.old)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("initFamilies: got error %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("initFamilies: got error %v, want none", err)
			}
			if got := ptr.Deref(tt.svc.Spec.IPFamilyPolicy, ""); got != tt.wantPolicy {
				t.Errorf("ipFamilyPolicy: got %q, want %q", got, tt.wantPolicy)
			}
			if diff := cmp.Diff(tt.wantFamilies, tt.svc.Spec.IPFamilies); diff != "" {
				t.Errorf("ipFamilies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantIPs, tt.svc.Spec.ClusterIPs); diff != "" {
				t.Errorf("clusterIPs (-want +got):\n%s", diff)
			}
		})
	}
}
