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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validService returns a defaulted ClusterIP service with an allocated IP.
func validService() *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.ServiceSpec{
			ClusterIP:  "10.0.0.10",
			ClusterIPs: []string{"10.0.0.10"},
			Selector:   map[string]string{"app": "web"},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	api.Scheme.Default(svc)
	return svc
}

func modified(svc *corev1.Service, mutate func(*corev1.Service)) *corev1.Service {
	svc = svc.DeepCopy()
	mutate(svc)
	return svc
}

func asExternalName(s *corev1.Service) {
	s.Spec.Type = corev1.ServiceTypeExternalName
	s.Spec.ExternalName = "db.example.com"
	s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Selector = "", nil, nil
}

func asNodePort(s *corev1.Service) {
	s.Spec.Type = corev1.ServiceTypeNodePort
	s.Spec.Ports[0].NodePort = 30080
}

func TestStorage(t *testing.T) {
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	storages, err := NewStorage(registrytest.NewMemStorage().Options("services"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	var names []string
	for name := range storages {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"services", "services/status"}, names); diff != "" {
		t.Fatalf("storage keys (-want +got):\n%s", diff)
	}
	store, ok := storages["services"].(*registry.REST)
	if !ok {
		t.Fatalf("services: got %T, want *registry.REST", storages["services"])
	}
	status, ok := storages["services/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("services/status: got %T, want *registry.StatusREST", storages["services/status"])
	}
	if diff := cmp.Diff([]string{"svc"}, store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"all"}, store.Categories()); diff != "" {
		t.Errorf("Categories (-want +got):\n%s", diff)
	}
	if !store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if store.BeginCreate == nil || store.BeginUpdate == nil {
		t.Errorf("BeginCreate/BeginUpdate: got nil, want the allocator's hooks")
	}
	if diff := cmp.Diff(registry.Fieldpaths("v1", "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.Fieldpaths("v1", "spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

// TestPrepare: services keep no generation; a create clears status, an
// update keeps it.
func TestPrepare(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "services")
	lb := corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}}}
	svc := modified(validService(), func(s *corev1.Service) { s.Status = lb })
	store.CreateStrategy.PrepareForCreate(context.Background(), svc)
	if diff := cmp.Diff(corev1.ServiceStatus{}, svc.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if svc.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0", svc.Generation)
	}
	old := modified(validService(), func(s *corev1.Service) { s.Status = lb })
	obj := modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].Port = 81 })
	store.UpdateStrategy.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(lb, obj.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
	}
	if obj.Generation != 0 {
		t.Errorf("generation after PrepareForUpdate: got %d, want 0", obj.Generation)
	}
}

func TestValidate(t *testing.T) {
	twoPorts := func(s *corev1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8443)})
	}
	tests := []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{name: "valid", svc: validService(), want: []string{}},
		{name: "two named ports", svc: modified(validService(), twoPorts), want: []string{}},
		{name: "one port without a name", svc: modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].Name = "" }), want: []string{}},
		{
			name: "no ports",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports = nil }),
			want: []string{"spec.ports: Required value"},
		},
		{
			name: "headless without ports",
			svc: modified(validService(), func(s *corev1.Service) {
				s.Spec.Ports, s.Spec.ClusterIP, s.Spec.ClusterIPs = nil, corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
			}),
			want: []string{},
		},
		{
			name: "NodePort without ports",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Type, s.Spec.Ports = corev1.ServiceTypeNodePort, nil }),
			want: []string{"spec.ports: Required value"},
		},
		{
			name: "two ports, one without a name",
			svc:  modified(validService(), func(s *corev1.Service) { twoPorts(s); s.Spec.Ports[1].Name = "" }),
			want: []string{"spec.ports[1].name: Required value"},
		},
		{
			name: "duplicate port names",
			svc:  modified(validService(), func(s *corev1.Service) { twoPorts(s); s.Spec.Ports[1].Name = "http" }),
			want: []string{"spec.ports[1].name: Duplicate value"},
		},
		{
			name: "port name that is no DNS label",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].Name = "HTTP_1" }),
			want: []string{"spec.ports[0].name: Invalid value"},
		},
		{
			name: "unsupported protocol",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" }),
			want: []string{"spec.ports[0].protocol: Unsupported value"},
		},
		{
			name: "UDP and SCTP",
			svc: modified(validService(), func(s *corev1.Service) {
				twoPorts(s)
				s.Spec.Ports[0].Protocol, s.Spec.Ports[1].Protocol = corev1.ProtocolUDP, corev1.ProtocolSCTP
			}),
			want: []string{},
		},
		{
			name: "port 0 and 65536",
			svc:  modified(validService(), func(s *corev1.Service) { twoPorts(s); s.Spec.Ports[0].Port, s.Spec.Ports[1].Port = 0, 65536 }),
			want: []string{"spec.ports[0].port: Invalid value", "spec.ports[1].port: Invalid value"},
		},
		{
			name: "named targetPort",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("http-alt") }),
			want: []string{},
		},
		{
			name: "targetPort that is no port name",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("not_a_name") }),
			want: []string{"spec.ports[0].targetPort: Invalid value"},
		},
		{
			name: "targetPort out of range",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(70000) }),
			want: []string{"spec.ports[0].targetPort: Invalid value"},
		},
		{
			name: "nodePort on a ClusterIP service",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }),
			want: []string{"spec.ports[0].nodePort: Forbidden"},
		},
		{name: "nodePort on a NodePort service", svc: modified(validService(), asNodePort), want: []string{}},
		{
			name: "nodePort on a LoadBalancer service",
			svc:  modified(validService(), func(s *corev1.Service) { asNodePort(s); s.Spec.Type = corev1.ServiceTypeLoadBalancer }),
			want: []string{},
		},
		{name: "ExternalName", svc: modified(validService(), asExternalName), want: []string{}},
		{
			name: "ExternalName without ports",
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.Ports = nil }),
			want: []string{},
		},
		{
			name: "ExternalName without a name", // Required, as upstream, not an invalid empty name
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.ExternalName = "" }),
			want: []string{"spec.externalName: Required value"},
		},
		{
			name: "ExternalName with a trailing dot",
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.ExternalName = "db.example.com." }),
			want: []string{},
		},
		{
			name: "ExternalName with a clusterIP",
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.ClusterIP = "10.0.0.10" }),
			want: []string{"spec.clusterIPs: Forbidden"},
		},
		{
			name: "ExternalName with clusterIPs",
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.ClusterIPs = []string{"10.0.0.10"} }),
			want: []string{"spec.clusterIPs: Forbidden"},
		},
		{
			name: "ExternalName that is no DNS name",
			svc:  modified(validService(), func(s *corev1.Service) { asExternalName(s); s.Spec.ExternalName = "not a host!" }),
			want: []string{"spec.externalName: Invalid value"},
		},
		{
			name: "unknown type",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Type = "Magic" }),
			want: []string{"spec.type: Unsupported value"},
		},
		{
			name: "selector with an invalid value",
			svc:  modified(validService(), func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "a b"} }),
			want: []string{"spec.selector: Invalid value"},
		},
		{
			name: "name that is no DNS-1035 label",
			svc:  modified(validService(), func(s *corev1.Service) { s.Name = "1web" }),
			want: []string{"metadata.name: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "services").CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(strategy.Validate(context.Background(), tt.svc))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateDuplicatePorts: upstream's ValidateService rejects two ports
// with the same port number and protocol ("spec.ports[i]: Duplicate value",
// pkg/apis/core/validation/validation.go); the same number for TCP and UDP is fine.
func TestValidateDuplicatePorts(t *testing.T) {
	port := func(name string, p int32, proto corev1.Protocol) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: p, Protocol: proto, TargetPort: intstr.FromInt32(p)}
	}
	tests := []struct {
		name  string
		ports []corev1.ServicePort
		want  []string
	}{
		{name: "53 TCP and UDP", ports: []corev1.ServicePort{port("dns-tcp", 53, corev1.ProtocolTCP), port("dns", 53, corev1.ProtocolUDP)}, want: []string{}},
		{name: "80 TCP twice", ports: []corev1.ServicePort{port("a", 80, corev1.ProtocolTCP), port("b", 80, corev1.ProtocolTCP)}, want: []string{"spec.ports[1]: Duplicate value"}},
	}
	strategy := registrytest.REST(t, NewStorage, "services").CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := modified(validService(), func(s *corev1.Service) { s.Spec.Ports = tt.ports })
			got := registrytest.ErrorPaths(strategy.Validate(context.Background(), svc))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	externalName := modified(validService(), asExternalName)
	tests := []struct {
		name     string
		old, obj *corev1.Service
		want     []string
	}{
		{name: "no change", old: validService(), obj: validService(), want: []string{}},
		{
			name: "ports may change",
			old:  validService(),
			obj:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].Port = 8000 }),
			want: []string{},
		},
		{
			name: "clusterIP may not change",
			old:  validService(),
			obj: modified(validService(), func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.11", []string{"10.0.0.11"}
			}),
			want: []string{"spec.clusterIPs[0]: Invalid value"},
		},
		{
			name: "clusterIP may not be cleared",
			old:  validService(),
			obj:  modified(validService(), func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil }),
			want: []string{"spec.clusterIPs[0]: Invalid value"},
		},
		{
			name: "a service with an IP may not turn headless",
			old:  validService(),
			obj: modified(validService(), func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
			}),
			want: []string{"spec.clusterIPs[0]: Invalid value"},
		},
		{name: "ClusterIP to NodePort", old: validService(), obj: modified(validService(), asNodePort), want: []string{}},
		{name: "ClusterIP to ExternalName", old: validService(), obj: externalName, want: []string{}},
		{
			name: "ExternalName to ClusterIP, with a new IP",
			old:  externalName,
			obj:  modified(validService(), func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.77", []string{"10.0.0.77"} }),
			want: []string{},
		},
		{
			name: "ExternalName name may change",
			old:  externalName,
			obj:  modified(externalName, func(s *corev1.Service) { s.Spec.ExternalName = "db2.example.com" }),
			want: []string{},
		},
		{
			name: "the new object is validated",
			old:  validService(),
			obj:  modified(validService(), func(s *corev1.Service) { s.Spec.Ports[0].Protocol = "ICMP" }),
			want: []string{"spec.ports[0].protocol: Unsupported value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "services").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}
