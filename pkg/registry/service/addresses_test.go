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
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestAddressValidation: external IPs and source ranges as kube-apiserver
// 1.37 checks them (StrictIPCIDRValidation on), an update keeping the ones
// an older server accepted.
func TestAddressValidation(t *testing.T) {
	legacy := modified(validService(), func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"010.1.1.1"} })
	lb := func(s *corev1.Service) {
		s.Spec.Type, s.Spec.AllocateLoadBalancerNodePorts = corev1.ServiceTypeLoadBalancer, ptr.To(true)
	}
	tests := []struct {
		name     string
		old, obj *corev1.Service // old is nil for a create
		want     []string
	}{
		{name: "external IPs", obj: modified(validService(), func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"010.1.1.1", "127.0.0.1", "1.2.3.4"} }), want: []string{
			`spec.externalIPs[0]: Invalid value: "010.1.1.1": must not have leading 0s`,
			`spec.externalIPs[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
		}},
		{name: "an external IP kept", old: legacy, obj: legacy, want: []string{}},
		{name: "source ranges without a load balancer", obj: modified(validService(), func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{" 10.0.0.0/8"} }), want: []string{
			"spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
		}},
		{name: "source ranges", obj: modified(validService(), func(s *corev1.Service) {
			lb(s)
			s.Spec.LoadBalancerSourceRanges = []string{" 10.0.0.0/8 ", "010.0.0.0/8"}
		}), want: []string{`spec.LoadBalancerSourceRanges[1]: Invalid value: "010.0.0.0/8": must not have leading 0s in IP or prefix length`}},
	}
	store := registrytest.REST(t, NewStorage, "services")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := store.CreateStrategy.Validate(context.Background(), tt.obj)
			if tt.old != nil {
				errs = store.UpdateStrategy.ValidateUpdate(context.Background(), tt.obj, tt.old)
			}
			if diff := cmp.Diff(tt.want, registrytest.Messages(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarnings: as kube-apiserver 1.37 (GetWarningsForService).
func TestWarnings(t *testing.T) {
	headless := modified(validService(), func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		s.Spec.LoadBalancerIP, s.Spec.ExternalIPs, s.Spec.SessionAffinity = "1.2.3.4", []string{"FD00::1"}, corev1.ServiceAffinityClientIP
		s.Annotations = map[string]string{corev1.DeprecatedAnnotationTopologyAwareHints: "auto"}
	})
	other := modified(validService(), func(s *corev1.Service) {
		s.Spec.ExternalIPs, s.Spec.ExternalName = []string{"1.2.3.4"}, "example.com"
		s.Spec.TrafficDistribution = ptr.To(corev1.ServiceTrafficDistributionPreferClose)
		s.Spec.LoadBalancerIP = "not an IP"
	})
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "services"), []registrytest.WarningCase{
		{Name: "headless", Obj: headless, Want: []string{
			"annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead",
			"spec.loadBalancerIP is ignored for headless services",
			"spec.externalIPs is ignored for headless services",
			"spec.SessionAffinity is ignored for headless services",
			`spec.externalIPs[0]: IPv6 address "FD00::1" should be in RFC 5952 canonical format ("fd00::1")`,
		}},
		{Name: "external IPs and name, on update", Obj: other, Old: validService(), Want: []string{
			"spec.externalIPs is deprecated and may no longer be implemented in some clusters",
			`spec.externalName is ignored when spec.type is not "ExternalName"`,
			`spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"`,
		}},
		{Name: "none", Obj: validService()},
	})
}
