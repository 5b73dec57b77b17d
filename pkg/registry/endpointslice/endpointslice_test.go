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
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validSlice returns a defaulted IPv4 slice that passes validation.
func validSlice() *discoveryv1.EndpointSlice {
	eps := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abc12", Namespace: "default", UID: "uid-1", ResourceVersion: "1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.1.5"}, NodeName: ptr.To("node-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.244.2.7"}, Hostname: ptr.To("web-1"), Zone: ptr.To("zone-a"), Hints: &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "zone-a"}}}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}, {Name: ptr.To("https"), Port: ptr.To[int32](443), AppProtocol: ptr.To("https")}},
	}
	api.Scheme.Default(eps)
	return eps
}

func modified(eps *discoveryv1.EndpointSlice, mutate func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	eps = eps.DeepCopy()
	mutate(eps)
	return eps
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "endpointslices")
	if got, want := store.DefaultQualifiedResource, discoveryv1.Resource("endpointslices"); got != want {
		t.Errorf("resource: got %v, want %v", got, want)
	}
	if !store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if got := store.ShortNames(); len(got) != 0 {
		t.Errorf("ShortNames: got %v, want none", got)
	}
	if store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "endpointslices", "endpointslices")
}

func TestValidate(t *testing.T) {
	addresses := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("10.0.%d.%d", i/250, i%250+1))
		}
		return out
	}
	tests := []struct {
		name string
		eps  *discoveryv1.EndpointSlice
		want []string
	}{
		{name: "valid", eps: validSlice(), want: []string{}},
		{
			name: "valid IPv6",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeIPv6
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"fd00:10:244::5"}}}
			}),
			want: []string{},
		},
		{
			name: "valid FQDN",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeFQDN
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"db.example.com"}}}
			}),
			want: []string{},
		},
		{
			name: "no endpoints, no ports",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints, eps.Ports = nil, nil }),
			want: []string{},
		},
		{
			name: "no addressType",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.AddressType = "" }),
			want: []string{"addressType: Required value"},
		},
		{
			name: "unknown addressType: its addresses are not checked",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = "IP"
				eps.Endpoints[0].Addresses = []string{"not an address"}
			}),
			want: []string{"addressType: Unsupported value"},
		},
		{
			name: "endpoint without addresses",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[1].Addresses = nil }),
			want: []string{"endpoints[1].addresses: Required value"},
		},
		{
			name: "endpoint with 100 addresses",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = addresses(100) }),
			want: []string{},
		},
		{
			name: "endpoint with 101 addresses",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = addresses(101) }),
			want: []string{"endpoints[0].addresses: Too many"},
		},
		{
			name: "1001 endpoints",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints = nil
				for _, a := range addresses(1001) {
					eps.Endpoints = append(eps.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
				}
			}),
			want: []string{"endpoints: Too many"},
		},
		{
			name: "addresses not of the slice's type",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints[0].Addresses = []string{"fd00::5"}
				eps.Endpoints[1].Addresses = []string{"web.example.com"}
			}),
			want: []string{"endpoints[0].addresses[0]: Invalid value", "endpoints[1].addresses[0]: Invalid value"},
		},
		{
			name: "IPv4 address in an IPv6 slice",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeIPv6
			}),
			want: []string{"endpoints[0].addresses[0]: Invalid value", "endpoints[1].addresses[0]: Invalid value"},
		},
		{
			name: "loopback address",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = []string{"127.0.0.1"} }),
			want: []string{"endpoints[0].addresses[0]: Invalid value"},
		},
		{
			name: "FQDN that is not one",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeFQDN
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"localhost"}}}
			}),
			want: []string{"endpoints[0].addresses[0]: Invalid value"},
		},
		{
			name: "bad nodeName, hostname and zone hint",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints[0].NodeName = ptr.To("Node_1")
				eps.Endpoints[1].Hostname = ptr.To("web.1")
				eps.Endpoints[1].Hints.ForZones = []discoveryv1.ForZone{{Name: "zone a"}}
			}),
			want: []string{"endpoints[0].nodeName: Invalid value", "endpoints[1].hints.forZones[0].name: Invalid value", "endpoints[1].hostname: Invalid value"},
		},
		{
			name: "duplicate port names, one defaulted to empty",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = []discoveryv1.EndpointPort{
					{Name: ptr.To(""), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)},
					{Name: nil, Port: ptr.To[int32](81), Protocol: ptr.To(corev1.ProtocolTCP)},
					{Name: ptr.To("a"), Port: ptr.To[int32](82), Protocol: ptr.To(corev1.ProtocolTCP)},
					{Name: ptr.To("a"), Port: ptr.To[int32](83), Protocol: ptr.To(corev1.ProtocolUDP)},
				}
			}),
			want: []string{"ports[1].name: Duplicate value", "ports[3].name: Duplicate value"},
		},
		{
			name: "bad port name, protocol and appProtocol",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports[0].Name = ptr.To("HTTP")
				eps.Ports[0].Protocol = ptr.To(corev1.Protocol("ICMP"))
				eps.Ports[1].Protocol = nil
				eps.Ports[1].AppProtocol = ptr.To("a/b/c")
			}),
			want: []string{"ports[0].name: Invalid value", "ports[0].protocol: Unsupported value", "ports[1].appProtocol: Invalid value", "ports[1].protocol: Required value"},
		},
		{
			name: "ports without numbers (all ports)",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = []discoveryv1.EndpointPort{{Name: ptr.To(""), Protocol: ptr.To(corev1.ProtocolTCP)}}
			}),
			want: []string{},
		},
		{
			name: "101 ports, above the documented 100 but within upstream's limit",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = nil
				for i := range 101 {
					eps.Ports = append(eps.Ports, discoveryv1.EndpointPort{Name: ptr.To(fmt.Sprintf("p%d", i)), Port: ptr.To(int32(1000 + i)), Protocol: ptr.To(corev1.ProtocolTCP)})
				}
			}),
			want: []string{},
		},
		{
			name: "20001 ports",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = make([]discoveryv1.EndpointPort, 20001)
			}),
			want: []string{"ports: Too many"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "endpointslices").CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(strategy.Validate(context.Background(), tt.eps))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name     string
		old, obj *discoveryv1.EndpointSlice
		want     []string
	}{
		{
			name: "endpoints and ports may change",
			old:  validSlice(),
			obj: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints = eps.Endpoints[:1]
				eps.Ports = eps.Ports[1:]
			}),
			want: []string{},
		},
		{
			name: "addressType is immutable",
			old:  validSlice(),
			obj: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeIPv6
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"fd00::5"}}}
			}),
			want: []string{"addressType: Invalid value"},
		},
		{
			name: "the create rules apply too",
			old:  validSlice(),
			obj:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = nil }),
			want: []string{"endpoints[0].addresses: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "endpointslices").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(strategy.ValidateUpdate(context.Background(), tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForCreateSetsGeneration(t *testing.T) {
	eps := modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Generation = 7 })
	want := modified(eps, func(eps *discoveryv1.EndpointSlice) { eps.Generation = 1 })
	registrytest.REST(t, NewStorage, "endpointslices").CreateStrategy.PrepareForCreate(context.Background(), eps)
	if diff := cmp.Diff(want, eps); diff != "" {
		t.Errorf("slice after PrepareForCreate (-want +got):\n%s", diff)
	}
}

func TestPrepareForUpdateGeneration(t *testing.T) {
	old := modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Generation = 4 })
	tests := []struct {
		name   string
		mutate func(*discoveryv1.EndpointSlice)
		want   int64
	}{
		{name: "unchanged", mutate: func(*discoveryv1.EndpointSlice) {}, want: 4},
		{name: "annotations only", mutate: func(eps *discoveryv1.EndpointSlice) { eps.Annotations = map[string]string{"a": "b"} }, want: 4},
		{name: "a client-sent generation is ignored", mutate: func(eps *discoveryv1.EndpointSlice) { eps.Generation = 40 }, want: 4},
		{name: "labels", mutate: func(eps *discoveryv1.EndpointSlice) { eps.Labels["extra"] = "x" }, want: 5},
		{name: "an endpoint's readiness", mutate: func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Conditions.Ready = ptr.To(false) }, want: 5},
		{name: "a port", mutate: func(eps *discoveryv1.EndpointSlice) { eps.Ports[0].Port = ptr.To[int32](8080) }, want: 5},
		{name: "addressType", mutate: func(eps *discoveryv1.EndpointSlice) { eps.AddressType = discoveryv1.AddressTypeIPv6 }, want: 5},
	}
	strategy := registrytest.REST(t, NewStorage, "endpointslices").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := modified(old, tt.mutate)
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if obj.Generation != tt.want {
				t.Errorf("generation: got %d, want %d", obj.Generation, tt.want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	tests := []struct {
		name string
		eps  *discoveryv1.EndpointSlice
		want []any
	}{
		{name: "two of each", eps: validSlice(), want: []any{"web-abc12", "IPv4", "80,443", "10.244.1.5,10.244.2.7", "<unknown>"}},
		{
			name: "empty",
			eps:  modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints, eps.Ports = nil, nil }),
			want: []any{"web-abc12", "IPv4", "<unset>", "<unset>", "<unknown>"},
		},
		{
			name: "more than three; ports without numbers print their name or *",
			eps: modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3", "10.0.0.4", "10.0.0.5"}}}
				eps.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("dns")}, {}, {Port: ptr.To[int32](53)}, {Port: ptr.To[int32](54)}}
			}),
			want: []any{"web-abc12", "IPv4", "dns,*,53 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...", "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "endpointslices")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.eps, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "AddressType", "Ports", "Endpoints", "Age"}, registrytest.ColumnNames(table)); diff != "" {
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
