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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

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

// TestStatus: a status update's load balancer as kube-apiserver 1.37
// checks it and warns of it, through the status endpoint.
func TestStatus(t *testing.T) {
	lb := modified(validService(), func(s *corev1.Service) {
		s.Spec.Type, s.Spec.AllocateLoadBalancerNodePorts = corev1.ServiceTypeLoadBalancer, ptr.To(true)
	})
	vip := ptr.To(corev1.LoadBalancerIPModeVIP)
	tests := []struct {
		name     string
		stored   *corev1.Service
		ingress  []corev1.LoadBalancerIngress
		want     []string // the errors
		warnings []string
	}{
		{name: "valid, an IPv6 address not in canonical form", stored: lb, ingress: []corev1.LoadBalancerIngress{{IP: "FD00::1", IPMode: vip}, {Hostname: "lb.example.com"}},
			warnings: []string{`status.loadBalancer.ingress[0]: IPv6 address "FD00::1" should be in RFC 5952 canonical format ("fd00::1")`}},
		{name: "not a load balancer", stored: validService(), ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}},
			want: []string{"status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"}},
		{name: "bad points", stored: lb, ingress: []corev1.LoadBalancerIngress{{IP: "010.0.0.1", IPMode: vip}, {IP: "10.0.0.2"}, {Hostname: "10.0.0.3", IPMode: vip}}, want: []string{
			`status.loadBalancer.ingress[0].ip: Invalid value: "010.0.0.1": must not have leading 0s`,
			"status.loadBalancer.ingress[1].ipMode: Required value: must be specified when `ip` is set",
			"status.loadBalancer.ingress[2].ipMode: Forbidden: may not be specified when `ip` is not set",
			`status.loadBalancer.ingress[2].hostname: Invalid value: "10.0.0.3": must be a DNS name, not an IP address`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServices(t)
			current := s.seed(t, tt.stored)
			update := modified(current, func(svc *corev1.Service) { svc.Status.LoadBalancer.Ingress = tt.ingress })
			var w registrytest.Warnings
			_, _, err := s.status.Update(w.Context("default"), current.Name, rest.DefaultUpdatedObjectInfo(update),
				rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			var got []string
			if err != nil {
				got = messages(t, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, w.Got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// messages returns the causes' messages of err, an Invalid status, in order.
func messages(t *testing.T, err error) []string {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		t.Fatalf("got error %v, want Invalid", err)
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}
