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
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func serviceBackend(name string, port int32) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: port}}}
}

// validIngress returns an ingress with two rules that passes validation.
func validIngress() *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules: []networkingv1.IngressRule{
				{Host: "example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: serviceBackend("web", 80)},
					{Path: "/api/v1", PathType: ptr.To(networkingv1.PathTypeExact), Backend: networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Name: "http"}},
					}},
				}}}},
				{Host: "*.example.org", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{PathType: ptr.To(networkingv1.PathTypeImplementationSpecific), Backend: networkingv1.IngressBackend{
						Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("storage.example.com"), Kind: "Bucket", Name: "static"},
					}},
				}}}},
			},
		},
	}
}

func TestStorage(t *testing.T) {
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("ingresses"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	status, ok := storages["ingresses/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "ingresses/status", storages["ingresses/status"])
	}
	store := registrytest.REST(t, NewStorage, "ingresses")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: networkingv1.Resource("ingresses"), Namespaced: true, ShortNames: []string{"ing"}})
	registrytest.CheckSpecAndStatus(t, store, status, "networking.k8s.io/v1")
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "ingresses", "ingresses", "ingresses/status")
}

func TestValidate(t *testing.T) {
	path := func(ing *networkingv1.Ingress) *networkingv1.HTTPIngressPath {
		return &ing.Spec.Rules[0].HTTP.Paths[0]
	}
	tests := []registrytest.Change[*networkingv1.Ingress]{
		{Name: "valid", Obj: validIngress(), Want: []string{}},
		{
			Name: "default backend only",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.Rules = nil
				ing.Spec.DefaultBackend = ptr.To(serviceBackend("web", 8080))
			}),
			Want: []string{},
		},
		{
			Name: "rule without http",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { ing.Spec.Rules[1].HTTP = nil }),
			Want: []string{},
		},
		{
			Name: "neither rules nor default backend",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { ing.Spec.Rules = nil }),
			Want: []string{"spec: Invalid value"},
		},
		{
			Name: "path without pathType",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { path(ing).PathType = nil }),
			Want: []string{"spec.rules[0].http.paths[0].pathType: Required value"},
		},
		{
			Name: "unknown pathType",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { path(ing).PathType = ptr.To(networkingv1.PathType("Regex")) }),
			Want: []string{"spec.rules[0].http.paths[0].pathType: Unsupported value"},
		},
		{
			Name: "relative Prefix and Exact paths",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				path(ing).Path = "app"
				ing.Spec.Rules[0].HTTP.Paths[1].Path = ""
			}),
			Want: []string{"spec.rules[0].http.paths[0].path: Invalid value", "spec.rules[0].http.paths[1].path: Invalid value"},
		},
		{
			Name: "relative ImplementationSpecific path",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { ing.Spec.Rules[1].HTTP.Paths[0].Path = "static" }),
			Want: []string{"spec.rules[1].http.paths[0].path: Invalid value"},
		},
		{
			Name: "path with // and a /.. suffix",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { path(ing).Path = "/a//b/.." }),
			Want: []string{"spec.rules[0].http.paths[0].path: Invalid value", "spec.rules[0].http.paths[0].path: Invalid value"},
		},
		{
			Name: "http without paths",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].HTTP.Paths = nil }),
			Want: []string{"spec.rules[0].http.paths: Required value"},
		},
		{
			Name: "backend with neither service nor resource",
			Obj:  registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { path(ing).Backend = networkingv1.IngressBackend{} }),
			Want: []string{"spec.rules[0].http.paths[0].backend: Invalid value"},
		},
		{
			Name: "backend with both",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				path(ing).Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}
			}),
			Want: []string{"spec.rules[0].http.paths[0].backend: Invalid value"},
		},
		{
			Name: "service backend without port",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				path(ing).Backend.Service.Port = networkingv1.ServiceBackendPort{}
			}),
			Want: []string{"spec.rules[0].http.paths[0].backend: Required value"},
		},
		{
			Name: "service backend with port name and number",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				path(ing).Backend.Service.Port.Name = "http"
			}),
			Want: []string{"spec.rules[0].http.paths[0].backend: Invalid value"},
		},
		{
			Name: "service backend without name, with a bad port number",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				path(ing).Backend.Service = &networkingv1.IngressServiceBackend{Port: networkingv1.ServiceBackendPort{Number: 70000}}
			}),
			Want: []string{"spec.rules[0].http.paths[0].backend.service.name: Required value", "spec.rules[0].http.paths[0].backend.service.port.number: Invalid value"},
		},
		{
			Name: "service backend with a bad name and port name",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				path(ing).Backend.Service = &networkingv1.IngressServiceBackend{Name: "web_1", Port: networkingv1.ServiceBackendPort{Name: "http_port"}}
			}),
			Want: []string{"spec.rules[0].http.paths[0].backend.service.name: Invalid value", "spec.rules[0].http.paths[0].backend.service.port.name: Invalid value"},
		},
		{
			Name: "resource backend without kind and name",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[1].HTTP.Paths[0].Backend.Resource = &corev1.TypedLocalObjectReference{}
			}),
			Want: []string{"spec.rules[1].http.paths[0].backend.resource.kind: Required value", "spec.rules[1].http.paths[0].backend.resource.name: Required value"},
		},
		{
			Name: "bad default backend",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.DefaultBackend = &networkingv1.IngressBackend{}
			}),
			Want: []string{"spec.defaultBackend: Invalid value"},
		},
		{
			Name: "hosts: an IP, a bad wildcard, a bad TLS host",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].Host = "10.0.0.1"
				ing.Spec.Rules[1].Host = "foo.*.example.org"
				ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"example.com", "Bad_Host"}, SecretName: "tls"}}
			}),
			Want: []string{"spec.rules[0].host: Invalid value", "spec.rules[1].host: Invalid value", "spec.tls[0].hosts[1]: Invalid value"},
		},
		{
			Name: "bad class and TLS secret name",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.IngressClassName = ptr.To("Nginx!")
				ing.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "TLS_Secret"}}
			}),
			Want: []string{"spec.ingressClassName: Invalid value", "spec.tls[0].secretName: Invalid value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "ingresses")
	registrytest.ValidateCreateAndUpdate(t, store, registrytest.ErrorPaths, validIngress, tests)
}

func TestPrepareForCreate(t *testing.T) {
	ing := registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
		ing.Generation = 9
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.1"}}
	})
	registrytest.REST(t, NewStorage, "ingresses").CreateStrategy.PrepareForCreate(context.Background(), ing)
	if diff := cmp.Diff(networkingv1.IngressStatus{}, ing.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if ing.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", ing.Generation)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	old := registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
		ing.Generation = 3
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.1"}}
	})
	tests := []registrytest.Generation[*networkingv1.Ingress]{
		{Name: "metadata only", Mutate: func(ing *networkingv1.Ingress) { ing.Labels = map[string]string{"a": "b"} }, Want: 3},
		{Name: "status only", Mutate: func(ing *networkingv1.Ingress) { ing.Status = networkingv1.IngressStatus{} }, Want: 3},
		{Name: "spec", Mutate: func(ing *networkingv1.Ingress) { ing.Spec.Rules[0].Host = "example.net" }, Want: 4},
	}
	strategy := registrytest.REST(t, NewStorage, "ingresses").UpdateStrategy
	registrytest.CheckGenerations(t, strategy, old, tests, func(t *testing.T, obj *networkingv1.Ingress) {
		if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
			t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
		}
	})
}

// TestUpdateThroughStores runs updates through the generic stores of
// ingresses and of ingresses/status.
func TestUpdateThroughStores(t *testing.T) {
	stored := registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) { ing.Generation = 1 })
	newStatus := networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.1"}}}}
	tests := []struct {
		name           string
		status         bool
		wantHost       string
		wantGeneration int64
		wantStatus     networkingv1.IngressStatus
	}{
		{name: "ingresses: spec changes, generation counts, status kept", wantHost: "example.net", wantGeneration: 2, wantStatus: networkingv1.IngressStatus{}},
		{name: "ingresses/status: status changes, spec kept", status: true, wantHost: "example.com", wantGeneration: 1, wantStatus: newStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "ingresses", tt.status, stored, func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].Host = "example.net"
				ing.Status = newStatus
			})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			if got.Spec.Rules[0].Host != tt.wantHost {
				t.Errorf("host: got %q, want %q", got.Spec.Rules[0].Host, tt.wantHost)
			}
			if got.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", got.Generation, tt.wantGeneration)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTable(t *testing.T) {
	rule := func(host string) networkingv1.IngressRule { return networkingv1.IngressRule{Host: host} }
	tests := []registrytest.Row{
		{
			Name: "two hosts, no address yet",
			Obj:  validIngress(),
			Want: []any{"web", "nginx", "example.com,*.example.org", "", "80", "<unknown>"},
		},
		{
			Name: "no class, default backend only, TLS, addresses sorted and unique",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.IngressClassName = nil
				ing.Spec.Rules = nil
				ing.Spec.DefaultBackend = ptr.To(serviceBackend("web", 80))
				ing.Spec.TLS = []networkingv1.IngressTLS{{SecretName: "tls"}}
				ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "lb.example.com"}, {IP: "203.0.113.1"}, {IP: "203.0.113.9"}}
			}),
			Want: []any{"web", "<none>", "*", "203.0.113.1,203.0.113.9,lb.example.com", "80, 443", "<unknown>"},
		},
		{
			Name: "hostless rules are skipped; past three hosts the rest count as more",
			Obj: registrytest.Modified(validIngress(), func(ing *networkingv1.Ingress) {
				ing.Spec.Rules = []networkingv1.IngressRule{rule("a.example.com"), rule(""), rule("b.example.com"), rule("c.example.com"), rule("d.example.com")}
			}),
			Want: []any{"web", "nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "", "80", "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "ingresses")
	registrytest.CheckTable(t, store, []string{"Name", "Class", "Hosts", "Address", "Ports", "Age"}, tests...)
}
