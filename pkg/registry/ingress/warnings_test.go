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
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
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

// TestStatus: a status update's load balancer as kube-apiserver 1.37
// checks it and warns of it, through the status endpoint.
func TestStatus(t *testing.T) {
	tests := []struct {
		name     string
		ingress  []networkingv1.IngressLoadBalancerIngress
		wantErr  string
		warnings []string
	}{
		{name: "valid, an IPv6 address not in canonical form", ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "FD00::1"}, {Hostname: "lb.example.com"}},
			warnings: []string{`status.loadBalancer.ingress[0]: IPv6 address "FD00::1" should be in RFC 5952 canonical format ("fd00::1")`}},
		{name: "bad points", ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "010.0.0.1"}, {Hostname: "10.0.0.3"}},
			wantErr: `Ingress.networking.k8s.io "web" is invalid: [status.loadBalancer.ingress[0].ip: Invalid value: "010.0.0.1": must not have leading 0s, ` +
				`status.loadBalancer.ingress[1].hostname: Invalid value: "10.0.0.3": must be a DNS name, not an IP address]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := registrytest.NewMemStorage()
			storages, err := NewStorage(mem.Options("ingresses"))
			if err != nil {
				t.Fatal(err)
			}
			var w registrytest.Warnings
			key, err := storages["ingresses"].(*registry.REST).KeyFunc(w.Context("default"), "web")
			if err != nil {
				t.Fatal(err)
			}
			stored := mem.Seed(t, key, validIngress()).(*networkingv1.Ingress)
			update := registrytest.Modified(stored, func(ing *networkingv1.Ingress) { ing.Status.LoadBalancer.Ingress = tt.ingress })
			_, err = registrytest.Update(w.Context("default"), storages, "ingresses", true, "web", update)
			if got := fmt.Sprint(err); (err != nil || tt.wantErr != "") && got != tt.wantErr {
				t.Errorf("got error %v, want %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.warnings, w.Got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
