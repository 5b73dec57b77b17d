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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
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

func TestKeepAllocated(t *testing.T) {
	nodePort := func(nodePorts ...int32) *corev1.Service {
		return modified(validService(), func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
			s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, NodePort: nodePorts[0]},
				{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, NodePort: nodePorts[1]},
			}
		})
	}
	withoutIP := func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = "", nil, nil, nil
	}
	tests := []struct {
		name     string
		old, obj *corev1.Service
		want     *corev1.Service
	}{
		{
			name: "clusterIP, families and policy kept",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(30080, 30443), withoutIP),
			want: nodePort(30080, 30443),
		},
		{
			name: "an explicit ipFamilyPolicy is not overwritten",
			old:  nodePort(30080, 30443),
			obj: modified(nodePort(30080, 30443), func(s *corev1.Service) {
				withoutIP(s)
				s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
			}),
			want: modified(nodePort(30080, 30443), func(s *corev1.Service) {
				s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
			}),
		},
		{
			name: "an explicit clusterIP is not overwritten",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(30080, 30443), func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.99", []string{"10.0.0.99"} }),
			want: modified(nodePort(30080, 30443), func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.99", []string{"10.0.0.99"} }),
		},
		{
			name: "nodePorts kept by port and protocol, whatever the order",
			old:  nodePort(30080, 30443),
			obj: modified(nodePort(0, 0), func(s *corev1.Service) {
				s.Spec.Ports[0], s.Spec.Ports[1] = s.Spec.Ports[1], s.Spec.Ports[0]
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
			}),
			want: modified(nodePort(30080, 30443), func(s *corev1.Service) {
				s.Spec.Ports[0], s.Spec.Ports[1] = s.Spec.Ports[1], s.Spec.Ports[0]
				s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP})
			}),
		},
		{
			name: "a port that changed protocol gets none",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP }),
			want: modified(nodePort(0, 30443), func(s *corev1.Service) { s.Spec.Ports[0].Protocol = corev1.ProtocolUDP }),
		},
		{
			name: "an explicit nodePort is not overwritten",
			old:  nodePort(30080, 30443),
			obj:  nodePort(31000, 0),
			want: nodePort(31000, 30443),
		},
		{
			name: "NodePort to ClusterIP: no nodePorts carried over",
			old:  nodePort(30080, 30443),
			obj:  modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
			want: modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
		},
		{
			name: "ClusterIP to NodePort: none to carry over",
			old:  modified(nodePort(0, 0), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
			obj:  nodePort(0, 0),
			want: nodePort(0, 0),
		},
		{
			name: "to ExternalName: no clusterIP carried over",
			old:  validService(),
			obj:  modified(validService(), asExternalName),
			want: modified(validService(), asExternalName),
		},
		{
			name: "from ExternalName: none to carry over",
			old:  modified(validService(), asExternalName),
			obj:  modified(validService(), withoutIP),
			want: modified(validService(), withoutIP),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.old.DeepCopy()
			keepAllocated(tt.obj, tt.old)
			if diff := cmp.Diff(tt.want, tt.obj); diff != "" {
				t.Errorf("service after keepAllocated (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(old, tt.old); diff != "" {
				t.Errorf("old service after keepAllocated (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGainsNodePorts(t *testing.T) {
	old := []corev1.ServicePort{{NodePort: 30001}, {NodePort: 30002}}
	tests := []struct {
		name  string
		ports []corev1.ServicePort
		want  bool
	}{
		{name: "no ports"},
		{name: "the same", ports: old},
		{name: "fewer", ports: old[:1]},
		{name: "one missing", ports: []corev1.ServicePort{{NodePort: 30001}, {}}, want: true},
		{name: "one new", ports: []corev1.ServicePort{{NodePort: 30001}, {NodePort: 30003}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{Ports: tt.ports}}
			if got := gainsNodePorts(svc, &corev1.Service{Spec: corev1.ServiceSpec{Ports: old}}); got != tt.want {
				t.Errorf("gainsNodePorts: got %v, want %v", got, tt.want)
			}
		})
	}
}

// services are the stores of services and services/status on one MemStorage.
type services struct {
	mem    *registrytest.MemStorage
	store  *registry.REST
	status *registry.StatusREST
}

func newServices(t *testing.T) services {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("services"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	return services{mem: mem, store: storages["services"].(*registry.REST), status: storages["services/status"].(*registry.StatusREST)}
}

var nsContext = genericapirequest.WithNamespace(context.Background(), "default")

func (s services) seed(t *testing.T, svc *corev1.Service) *corev1.Service {
	t.Helper()
	key, err := s.store.KeyFunc(nsContext, svc.Name)
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return s.mem.Seed(t, key, svc).(*corev1.Service)
}

// TestUpdateKeepsAllocations runs updates through the stores: an update
// that leaves out the cluster IP and node ports keeps them (the MemStorage
// lists nothing, so an update that allocated would fail).
func TestUpdateKeepsAllocations(t *testing.T) {
	stored := modified(validService(), func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.AllocateLoadBalancerNodePorts = ptr.To(true)
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		s.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
		s.Spec.Ports[0].NodePort = 30080
	})
	for _, viaStatus := range []bool{false, true} {
		t.Run(map[bool]string{false: "services", true: "services/status"}[viaStatus], func(t *testing.T) {
			s := newServices(t)
			current := s.seed(t, stored)
			update := modified(current, func(svc *corev1.Service) {
				svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
				svc.Spec.Ports[0].NodePort = 0
				svc.Spec.Selector = map[string]string{"app": "web2"}
				svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
			})
			var updater rest.Updater = s.store
			if viaStatus {
				updater = s.status
			}
			out, _, err := updater.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*corev1.Service)
			if got.Spec.ClusterIP != "10.0.0.10" || !slices.Equal(got.Spec.ClusterIPs, []string{"10.0.0.10"}) {
				t.Errorf("clusterIP, clusterIPs: got %q, %v, want the stored 10.0.0.10", got.Spec.ClusterIP, got.Spec.ClusterIPs)
			}
			if got.Spec.Ports[0].NodePort != 30080 {
				t.Errorf("nodePort: got %d, want the stored 30080", got.Spec.Ports[0].NodePort)
			}
			wantSelector, wantStatus := map[string]string{"app": "web2"}, current.Status
			if viaStatus {
				wantSelector, wantStatus = current.Spec.Selector, update.Status
			}
			if diff := cmp.Diff(wantSelector, got.Spec.Selector); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateFromAnOldClient: a client that knows spec.clusterIP but not
// spec.clusterIPs (before 1.20) sends the unchanged clusterIP alone.
// Upstream's strategy fills clusterIPs in from the old object
// (normalizeClusterIPs in pkg/registry/core/service/strategy.go), so the
// update is valid.
func TestUpdateFromAnOldClient(t *testing.T) {
	s := newServices(t)
	current := s.seed(t, validService())
	update := modified(current, func(svc *corev1.Service) {
		svc.Spec.ClusterIPs = nil
		svc.Spec.Ports[0].Port = 8000
	})
	out, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update with clusterIP but no clusterIPs: got error %v, want none", err)
	}
	if got := out.(*corev1.Service).Spec.ClusterIPs; !slices.Equal(got, []string{"10.0.0.10"}) {
		t.Errorf("clusterIPs: got %v, want [10.0.0.10]", got)
	}
}

// TestUpdateCannotChangeTheClusterIP: a new clusterIP with clusterIPs as
// they were (a merge patch of clusterIP alone) is refused as upstream
// refuses it, on clusterIPs[0], and the stored service keeps both.
func TestUpdateCannotChangeTheClusterIP(t *testing.T) {
	s := newServices(t)
	current := s.seed(t, validService())
	update := modified(current, func(svc *corev1.Service) { svc.Spec.ClusterIP = "10.0.0.99" })
	_, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	want := `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.99"]: may not change once set`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Fatalf("Update of clusterIP alone: got %v, want %s", err, want)
	}
	stored, err := s.store.Get(nsContext, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec := stored.(*corev1.Service).Spec; spec.ClusterIP != "10.0.0.10" || !slices.Equal(spec.ClusterIPs, []string{"10.0.0.10"}) {
		t.Errorf("stored: clusterIP %s, clusterIPs %v; want 10.0.0.10 in both", spec.ClusterIP, spec.ClusterIPs)
	}
}

// TestClusterIPsMustFollowClusterIP: clusterIPs that disagree with
// clusterIP are refused with upstream's errors, on a create before
// anything is allocated, and on an update of clusterIPs alone.
func TestClusterIPsMustFollowClusterIP(t *testing.T) {
	s := newServices(t)
	for name, tt := range map[string]struct {
		clusterIP  string
		clusterIPs []string
		want       string
	}{
		"disagreeing":      {"10.0.0.50", []string{"10.0.0.51"}, `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.51"]: first value must match ` + "`clusterIP`"},
		"clusterIPs alone": {"", []string{"10.0.0.51"}, `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.51"]: must be empty when ` + "`clusterIP`" + ` is not specified`},
	} {
		svc := modified(validService(), func(svc *corev1.Service) { svc.Spec.ClusterIP, svc.Spec.ClusterIPs = tt.clusterIP, tt.clusterIPs })
		if _, err := s.store.Create(nsContext, svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err == nil || err.Error() != tt.want {
			t.Errorf("%s: create got %v, want %s", name, err, tt.want)
		}
	}
	current := s.seed(t, validService())
	update := modified(current, func(svc *corev1.Service) { svc.Spec.ClusterIPs = []string{"10.0.0.77"} })
	_, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if want := `Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.77"]: first value must match ` + "`clusterIP`"; err == nil || err.Error() != want {
		t.Errorf("update of clusterIPs alone: got %v, want %s", err, want)
	}
}

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

// TestUpdateTypeChangeDropsAllocations: a client that changes only
// spec.type (kubectl patch -p '{"spec":{"type":"ClusterIP"}}' sends the
// rest of the stored spec back) leaves the old node ports or cluster IP in
// place. Upstream's strategy drops the values the new type does not use
// when they are unchanged from the old object (dropTypeDependentFields in
// pkg/registry/core/service/strategy.go), so the update is valid.
func TestUpdateTypeChangeDropsAllocations(t *testing.T) {
	tests := []struct {
		name   string
		stored *corev1.Service
		mutate func(*corev1.Service)
		check  func(*corev1.Service) (got, want any)
	}{
		{
			name:   "NodePort to ClusterIP: node ports dropped",
			stored: modified(validService(), asNodePort),
			mutate: func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP },
			check: func(s *corev1.Service) (any, any) {
				return []any{s.Spec.Ports[0].NodePort, s.Spec.ClusterIP}, []any{int32(0), "10.0.0.10"}
			},
		},
		{
			name:   "ClusterIP to ExternalName: cluster IP dropped",
			stored: validService(),
			mutate: func(s *corev1.Service) {
				s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "db.example.com"
			},
			check: func(s *corev1.Service) (any, any) {
				return []any{s.Spec.ClusterIP, len(s.Spec.ClusterIPs)}, []any{"", 0}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServices(t)
			current := s.seed(t, tt.stored)
			update := modified(current, tt.mutate)
			out, _, err := s.store.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got, want := tt.check(out.(*corev1.Service))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("updated service (-want +got):\n%s", diff)
			}
		})
	}
}

// timingOut is a MemStorage whose creates fail as one that times out
// does: stored or not (lands), the caller gets an error.
type timingOut struct {
	*registrytest.MemStorage
	lands bool
}

func (s timingOut) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if s.lands {
		if err := s.MemStorage.Create(ctx, key, obj, out, ttl); err != nil {
			return err
		}
	}
	return context.DeadlineExceeded
}

// TestAFailedCreateReleasesItsAddressUnlessStored: a create whose write
// fails deletes the IPAddress it recorded, unless the Service was stored
// after all (a write that times out may yet be committed): that Service
// holds the address, which must stay recorded.
func TestAFailedCreateReleasesItsAddressUnlessStored(t *testing.T) {
	for _, lands := range []bool{false, true} {
		t.Run(map[bool]string{false: "lost", true: "stored"}[lands], func(t *testing.T) {
			records := &ipRecords{held: map[string]bool{}}
			storages, err := New(registrytest.Options(timingOut{registrytest.NewMemStorage(), lands}, "services"), records, DefaultRanges)
			if err != nil {
				t.Fatal(err)
			}
			store := storages.Services
			svc := modified(validService(), func(s *corev1.Service) {
				s.ResourceVersion, s.CreationTimestamp = "", metav1.Now()
				s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
			})
			if _, err := store.Create(nsContext, svc, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err == nil {
				t.Fatal("Create: got no error, want the write's")
			}
			if len(records.created) != 1 {
				t.Fatalf("IPAddresses created: %v, want one", records.created)
			}
			if released := slices.Equal(records.deleted, records.created); released == lands {
				t.Errorf("Service stored: %v; its IPAddress %s released: %v, want %v", lands, records.created[0], released, !lands)
			}
			if got, err := store.Get(nsContext, "web", &metav1.GetOptions{}); lands && (err != nil || got.(*corev1.Service).Spec.ClusterIP != records.created[0]) {
				t.Errorf("the stored Service: got %v, %v; want it holding %s", got, err, records.created[0])
			}
		})
	}
}

// TestDryRunsRecordAndReleaseNothing: as upstream's allocator, a dry-run
// create shows the address a create would get but records none, and a
// dry-run delete (the generic store runs AfterDelete for it too) leaves
// the Service's address recorded.
func TestDryRunsRecordAndReleaseNothing(t *testing.T) {
	records := &ipRecords{held: map[string]bool{}}
	storages, err := New(registrytest.NewMemStorage().Options("services"), records, DefaultRanges)
	if err != nil {
		t.Fatal(err)
	}
	store := storages.Services
	newService := func() *corev1.Service {
		return modified(validService(), func(s *corev1.Service) {
			s.ResourceVersion, s.CreationTimestamp = "", metav1.Now()
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		})
	}
	dryRun := []string{metav1.DryRunAll}
	out, err := store.Create(nsContext, newService(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{DryRun: dryRun})
	if err != nil || out.(*corev1.Service).Spec.ClusterIP == "" {
		t.Fatalf("dry-run Create: got %v, %v; want a Service with a cluster IP", out, err)
	}
	if len(records.created) != 0 {
		t.Errorf("a dry-run create recorded %v, want nothing", records.created)
	}
	if _, err := store.Create(nsContext, newService(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Delete(nsContext, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{DryRun: dryRun}); err != nil {
		t.Fatal(err)
	}
	if len(records.deleted) != 0 {
		t.Errorf("a dry-run delete released %v, want nothing", records.deleted)
	}
	if _, _, err := store.Delete(nsContext, "web", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(records.deleted, records.created) || len(records.created) != 1 {
		t.Errorf("a delete released %v, want what the create recorded, %v", records.deleted, records.created)
	}
}
