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
	tests := []registrytest.Change[*discoveryv1.EndpointSlice]{
		{Name: "valid", Obj: validSlice(), Want: []string{}},
		{
			Name: "valid IPv6",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeIPv6
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"fd00:10:244::5"}}}
			}),
			Want: []string{},
		},
		{
			Name: "valid FQDN",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeFQDN
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"db.example.com"}}}
			}),
			Want: []string{},
		},
		{
			Name: "no endpoints, no ports",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints, eps.Ports = nil, nil }),
			Want: []string{},
		},
		{
			Name: "no addressType",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.AddressType = "" }),
			Want: []string{"addressType: Required value"},
		},
		{
			Name: "unknown addressType: its addresses are not checked",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = "IP"
				eps.Endpoints[0].Addresses = []string{"not an address"}
			}),
			Want: []string{"addressType: Unsupported value"},
		},
		{
			Name: "endpoint without addresses",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[1].Addresses = nil }),
			Want: []string{"endpoints[1].addresses: Required value"},
		},
		{
			Name: "endpoint with 100 addresses",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = addresses(100) }),
			Want: []string{},
		},
		{
			Name: "endpoint with 101 addresses",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = addresses(101) }),
			Want: []string{"endpoints[0].addresses: Too many"},
		},
		{
			Name: "1001 endpoints",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints = nil
				for _, a := range addresses(1001) {
					eps.Endpoints = append(eps.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}})
				}
			}),
			Want: []string{"endpoints: Too many"},
		},
		{
			Name: "addresses not of the slice's type",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints[0].Addresses = []string{"fd00::5"}
				eps.Endpoints[1].Addresses = []string{"web.example.com"}
			}),
			Want: []string{"endpoints[0].addresses: Invalid value", "endpoints[1].addresses[0]: Invalid value"},
		},
		{ // upstream reports the family at the addresses, not at the address
			Name: "IPv4 address in an IPv6 slice",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeIPv6
			}),
			Want: []string{"endpoints[0].addresses: Invalid value", "endpoints[1].addresses: Invalid value"},
		},
		{ // StrictIPCIDRValidation, on in 1.37; IPv6 addresses canonical
			Name: "an IP with a leading 0, a non-canonical IPv6 one",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints[0].Addresses = []string{"010.244.1.5"}
				eps.AddressType, eps.Endpoints[1].Addresses = discoveryv1.AddressTypeIPv6, []string{"FD00::5"}
			}),
			Want: []string{"endpoints[0].addresses[0]: Invalid value", "endpoints[1].addresses[0]: Invalid value"},
		},
		{
			Name: "loopback address",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = []string{"127.0.0.1"} }),
			Want: []string{"endpoints[0].addresses[0]: Invalid value"},
		},
		{
			Name: "FQDN that is not one",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeFQDN
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"localhost"}}}
			}),
			Want: []string{"endpoints[0].addresses[0]: Invalid value"},
		},
		{
			Name: "bad nodeName, hostname and zone hint",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints[0].NodeName = ptr.To("Node_1")
				eps.Endpoints[1].Hostname = ptr.To("web.1")
				eps.Endpoints[1].Hints.ForZones = []discoveryv1.ForZone{{Name: "zone a"}}
			}),
			Want: []string{"endpoints[0].nodeName: Invalid value", "endpoints[1].hints.forZones[0].name: Invalid value", "endpoints[1].hostname: Invalid value"},
		},
		{
			Name: "duplicate port names, one defaulted to empty",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = []discoveryv1.EndpointPort{
					{Name: ptr.To(""), Port: ptr.To[int32](80), Protocol: ptr.To(corev1.ProtocolTCP)},
					{Name: nil, Port: ptr.To[int32](81), Protocol: ptr.To(corev1.ProtocolTCP)},
					{Name: ptr.To("a"), Port: ptr.To[int32](82), Protocol: ptr.To(corev1.ProtocolTCP)},
					{Name: ptr.To("a"), Port: ptr.To[int32](83), Protocol: ptr.To(corev1.ProtocolUDP)},
				}
			}),
			Want: []string{"ports[1].name: Duplicate value", "ports[3].name: Duplicate value"},
		},
		{
			Name: "bad port name, protocol and appProtocol",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports[0].Name = ptr.To("HTTP")
				eps.Ports[0].Protocol = ptr.To(corev1.Protocol("ICMP"))
				eps.Ports[1].Protocol = nil
				eps.Ports[1].AppProtocol = ptr.To("a/b/c")
			}),
			Want: []string{"ports[0].name: Invalid value", "ports[0].protocol: Unsupported value", "ports[1].appProtocol: Invalid value", "ports[1].protocol: Required value"},
		},
		{
			Name: "ports without numbers (all ports)",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = []discoveryv1.EndpointPort{{Name: ptr.To(""), Protocol: ptr.To(corev1.ProtocolTCP)}}
			}),
			Want: []string{},
		},
		{
			Name: "101 ports, above the documented 100 but within upstream's limit",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = nil
				for i := range 101 {
					eps.Ports = append(eps.Ports, discoveryv1.EndpointPort{Name: ptr.To(fmt.Sprintf("p%d", i)), Port: ptr.To(int32(1000 + i)), Protocol: ptr.To(corev1.ProtocolTCP)})
				}
			}),
			Want: []string{},
		},
		{
			Name: "20001 ports",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Ports = make([]discoveryv1.EndpointPort, 20001)
			}),
			Want: []string{"ports: Too many"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "endpointslices").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Change[*discoveryv1.EndpointSlice]{
		{
			Name: "endpoints and ports may change",
			Old:  validSlice(),
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints = eps.Endpoints[:1]
				eps.Ports = eps.Ports[1:]
			}),
			Want: []string{},
		},
		{
			Name: "addressType is immutable",
			Old:  validSlice(),
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.AddressType = discoveryv1.AddressTypeIPv6
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"fd00::5"}}}
			}),
			Want: []string{"addressType: Invalid value"},
		},
		{
			Name: "endpoints an older server accepted, kept",
			Old:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses[0] = "010.244.1.5" }),
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints[0].Addresses[0] = "010.244.1.5"
				eps.Ports = eps.Ports[1:]
			}),
			Want: []string{},
		},
		{
			Name: "the create rules apply too",
			Old:  validSlice(),
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Addresses = nil }),
			Want: []string{"endpoints[0].addresses: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "endpointslices").UpdateStrategy
	registrytest.ValidateUpdateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestPrepareForCreateSetsGeneration(t *testing.T) {
	eps := registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Generation = 7 })
	want := registrytest.Modified(eps, func(eps *discoveryv1.EndpointSlice) { eps.Generation = 1 })
	registrytest.REST(t, NewStorage, "endpointslices").CreateStrategy.PrepareForCreate(context.Background(), eps)
	if diff := cmp.Diff(want, eps); diff != "" {
		t.Errorf("slice after PrepareForCreate (-want +got):\n%s", diff)
	}
}

func TestPrepareForUpdateGeneration(t *testing.T) {
	old := registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Generation = 4 })
	tests := []registrytest.Generation[*discoveryv1.EndpointSlice]{
		{Name: "unchanged", Mutate: func(*discoveryv1.EndpointSlice) {}, Want: 4},
		{Name: "annotations only", Mutate: func(eps *discoveryv1.EndpointSlice) { eps.Annotations = map[string]string{"a": "b"} }, Want: 4},
		{Name: "a client-sent generation is ignored", Mutate: func(eps *discoveryv1.EndpointSlice) { eps.Generation = 40 }, Want: 4},
		{Name: "labels", Mutate: func(eps *discoveryv1.EndpointSlice) { eps.Labels["extra"] = "x" }, Want: 5},
		{Name: "an endpoint's readiness", Mutate: func(eps *discoveryv1.EndpointSlice) { eps.Endpoints[0].Conditions.Ready = ptr.To(false) }, Want: 5},
		{Name: "a port", Mutate: func(eps *discoveryv1.EndpointSlice) { eps.Ports[0].Port = ptr.To[int32](8080) }, Want: 5},
		{Name: "addressType", Mutate: func(eps *discoveryv1.EndpointSlice) { eps.AddressType = discoveryv1.AddressTypeIPv6 }, Want: 5},
	}
	strategy := registrytest.REST(t, NewStorage, "endpointslices").UpdateStrategy
	registrytest.CheckGenerations(t, strategy, old, tests, nil)
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "two of each", Obj: validSlice(), Want: []any{"web-abc12", "IPv4", "80,443", "10.244.1.5,10.244.2.7", "<unknown>"}},
		{
			Name: "empty",
			Obj:  registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) { eps.Endpoints, eps.Ports = nil, nil }),
			Want: []any{"web-abc12", "IPv4", "<unset>", "<unset>", "<unknown>"},
		},
		{
			Name: "more than three; ports without numbers print their name or *",
			Obj: registrytest.Modified(validSlice(), func(eps *discoveryv1.EndpointSlice) {
				eps.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3", "10.0.0.4", "10.0.0.5"}}}
				eps.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("dns")}, {}, {Port: ptr.To[int32](53)}, {Port: ptr.To[int32](54)}}
			}),
			Want: []any{"web-abc12", "IPv4", "dns,*,53 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...", "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "endpointslices")
	registrytest.CheckTable(t, store, []string{"Name", "AddressType", "Ports", "Endpoints", "Age"}, tests...)
}
