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
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "services")
	registrytest.CheckFields(t, store, modified(validService(), asNodePort), fields.Set{"metadata.name": "web", "metadata.namespace": "default", "spec.clusterIP": "10.0.0.10", "spec.type": "NodePort"})
}

func TestTable(t *testing.T) {
	lb := func(s *corev1.Service) {
		asNodePort(s)
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
	}
	tests := []struct {
		name string
		svc  *corev1.Service
		want []any
	}{
		{
			name: "ClusterIP",
			svc:  validService(),
			want: []any{"web", "ClusterIP", "10.0.0.10", "<none>", "80/TCP", "<unknown>", "app=web"},
		},
		{
			name: "ClusterIP with external IPs",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"198.51.100.1", "198.51.100.2"} }),
			want: []any{"web", "ClusterIP", "10.0.0.10", "198.51.100.1,198.51.100.2", "80/TCP", "<unknown>", "app=web"},
		},
		{
			name: "headless, several ports",
			svc: modified(validService(), func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
			}),
			want: []any{"web", "ClusterIP", "None", "<none>", "80/TCP,53/UDP", "<unknown>", "app=web"},
		},
		{
			name: "NodePort",
			svc: modified(validService(), func(s *corev1.Service) {
				asNodePort(s)
				s.Spec.Ports[0].NodePort = 30001
			}),
			want: []any{"web", "NodePort", "10.0.0.10", "<none>", "80:30001/TCP", "<unknown>", "app=web"},
		},
		{
			name: "LoadBalancer pending",
			svc:  modified(validService(), lb),
			want: []any{"web", "LoadBalancer", "10.0.0.10", "<pending>", "80:30080/TCP", "<unknown>", "app=web"},
		},
		{
			name: "LoadBalancer with an IP and a hostname",
			svc: modified(validService(), func(s *corev1.Service) {
				lb(s)
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.10"}, {Hostname: "lb.example.com"}}
			}),
			want: []any{"web", "LoadBalancer", "10.0.0.10", "203.0.113.10,lb.example.com", "80:30080/TCP", "<unknown>", "app=web"},
		},
		{
			name: "ExternalName",
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.Ports = nil }),
			want: []any{"web", "ExternalName", "<none>", "db.example.com", "<none>", "<unknown>", "<none>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "services")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.svc, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTableLoadBalancerAddresses: upstream's printer
// (getServiceExternalIP and loadBalancerStatusStringer in
// pkg/printers/internalversion/printers.go) lists a load balancer's
// ingress addresses first, sorted and without duplicates, then
// spec.externalIPs.
func TestTableLoadBalancerAddresses(t *testing.T) {
	svc := modified(validService(), func(s *corev1.Service) {
		asNodePort(s)
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalIPs = []string{"198.51.100.5"}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "203.0.113.10"}, {IP: "203.0.113.10"}}
	})
	table, err := registrytest.REST(t, NewStorage, "services").ConvertToTable(context.Background(), svc, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if got, want := table.Rows[0].Cells[3], "203.0.113.10,lb.example.com,198.51.100.5"; got != want {
		t.Errorf("External-IP: got %q, want %q", got, want)
	}
}
