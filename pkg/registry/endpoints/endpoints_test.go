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

package endpoints

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// validEndpoints returns defaulted endpoints that pass validation.
func validEndpoints() *corev1.Endpoints {
	ep := &corev1.Endpoints{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Subsets: []corev1.EndpointSubset{{
			Addresses:         []corev1.EndpointAddress{{IP: "10.244.1.5", NodeName: ptr.To("node-1")}, {IP: "10.244.2.7", Hostname: "web-1"}},
			NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.244.3.9"}},
			Ports:             []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}},
		}},
	}
	api.Scheme.Default(ep)
	return ep
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "endpoints")
	if !store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if diff := cmp.Diff([]string{"ep"}, store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if got, want := store.DefaultQualifiedResource, corev1.Resource("endpoints"); got != want {
		t.Errorf("resource: got %v, want %v", got, want)
	}
	// As upstream: the endpoints controller PUTs the endpoints it manages.
	if !store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got false, want true")
	}
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "endpoints", "endpoints")
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.Endpoints]{
		{Name: "valid", Obj: validEndpoints(), Want: []string{}},
		{Name: "no subsets", Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) { ep.Subsets = nil }), Want: []string{}},
		{
			Name: "headless: one unnamed port, or none",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets = append(ep.Subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.244.1.6"}}})
				ep.Subsets[0].Ports = []corev1.EndpointPort{{Port: 8080, Protocol: corev1.ProtocolUDP}}
			}),
			Want: []string{},
		},
		{
			Name: "IPv6 and SCTP",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "fd00:10:244::5"}}
				ep.Subsets[0].Ports[1].Protocol = corev1.ProtocolSCTP
			}),
			Want: []string{},
		},
		{
			Name: "subset without addresses",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Addresses, ep.Subsets[0].NotReadyAddresses = nil, nil
			}),
			Want: []string{"subsets[0]: Required value"},
		},
		{
			Name: "invalid IPs",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Addresses[1].IP = "10.244.2"
				ep.Subsets[0].NotReadyAddresses[0].IP = "web.example.com"
			}),
			// As upstream: the format check and ValidateEndpointIP both refuse them.
			Want: []string{
				"subsets[0].addresses[1].ip: Invalid value", "subsets[0].addresses[1].ip: Invalid value",
				"subsets[0].notReadyAddresses[0].ip: Invalid value", "subsets[0].notReadyAddresses[0].ip: Invalid value",
			},
		},
		{
			Name: "special IPs",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Addresses = []corev1.EndpointAddress{{IP: "127.0.0.1"}, {IP: "0.0.0.0"}, {IP: "169.254.169.254"}, {IP: "::1"}}
			}),
			Want: []string{
				"subsets[0].addresses[0].ip: Invalid value", "subsets[0].addresses[1].ip: Invalid value",
				"subsets[0].addresses[2].ip: Invalid value", "subsets[0].addresses[3].ip: Invalid value",
			},
		},
		{
			Name: "bad hostname and nodeName",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Addresses[0].Hostname = "web.1"
				ep.Subsets[0].Addresses[0].NodeName = ptr.To("Node_1")
			}),
			Want: []string{"subsets[0].addresses[0].hostname: Invalid value", "subsets[0].addresses[0].nodeName: Invalid value"},
		},
		{
			Name: "port numbers out of range",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Ports[0].Port = 0
				ep.Subsets[0].Ports[1].Port = 65536
			}),
			Want: []string{"subsets[0].ports[0].port: Invalid value", "subsets[0].ports[1].port: Invalid value"},
		},
		{
			Name: "bad protocols",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Ports[0].Protocol = ""
				ep.Subsets[0].Ports[1].Protocol = "ICMP"
			}),
			Want: []string{"subsets[0].ports[0].protocol: Required value", "subsets[0].ports[1].protocol: Unsupported value"},
		},
		{
			Name: "several ports need names",
			Obj:  registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) { ep.Subsets[0].Ports[1].Name = "" }),
			Want: []string{"subsets[0].ports[1].name: Required value"},
		},
		{
			Name: "port name that is no DNS label, bad appProtocol",
			Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
				ep.Subsets[0].Ports[0].Name = "HTTP"
				ep.Subsets[0].Ports[1].AppProtocol = ptr.To("a/b/c")
			}),
			Want: []string{"subsets[0].ports[0].name: Invalid value", "subsets[0].ports[1].appProtocol: Invalid value"},
		},
	}
	tests = append(tests, registrytest.Change[*corev1.Endpoints]{ // StrictIPCIDRValidation, on in 1.37
		Name: "an IP with a leading 0, an IPv4-mapped IPv6 one",
		Obj: registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) {
			ep.Subsets[0].Addresses[0].IP, ep.Subsets[0].Addresses[1].IP = "010.244.1.5", "::ffff:10.244.2.7"
		}),
		Want: []string{"subsets[0].addresses[0].ip: Invalid value", "subsets[0].addresses[1].ip: Invalid value"},
	})
	store := registrytest.REST(t, NewStorage, "endpoints")
	// The same rules hold on update.
	registrytest.ValidateCreateAndUpdate(t, store, registrytest.ErrorPaths, validEndpoints, tests)
}

func TestPrepareLeavesEndpointsAlone(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "endpoints")
	ep := validEndpoints()
	want := ep.DeepCopy()
	store.CreateStrategy.PrepareForCreate(context.Background(), ep)
	store.UpdateStrategy.PrepareForUpdate(context.Background(), ep, registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) { ep.Subsets = nil }))
	if diff := cmp.Diff(want, ep); diff != "" {
		t.Errorf("endpoints after PrepareForCreate/PrepareForUpdate (-want +got):\n%s", diff)
	}
}

func TestTable(t *testing.T) {
	addresses := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	tests := []struct {
		name    string
		subsets []corev1.EndpointSubset
		want    string
	}{
		{name: "none", subsets: nil, want: "<none>"},
		{
			name:    "one port",
			subsets: []corev1.EndpointSubset{{Addresses: addresses("10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{{Port: 80}}}},
			want:    "10.0.0.1:80,10.0.0.2:80",
		},
		{
			name:    "three exactly",
			subsets: []corev1.EndpointSubset{{Addresses: addresses("10.0.0.1", "10.0.0.2", "10.0.0.3"), Ports: []corev1.EndpointPort{{Port: 80}}}},
			want:    "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80",
		},
		{
			name: "more than three, across ports and subsets, IPv6 bracketed",
			subsets: []corev1.EndpointSubset{
				{Addresses: addresses("10.0.0.1", "fd00::2"), Ports: []corev1.EndpointPort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}},
				{Addresses: addresses("10.0.0.3"), Ports: []corev1.EndpointPort{{Port: 53}}},
			},
			want: "10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 2 more...",
		},
		{
			name:    "headless without ports",
			subsets: []corev1.EndpointSubset{{Addresses: addresses("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")}},
			want:    "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...",
		},
		{
			name:    "only not-ready addresses",
			subsets: []corev1.EndpointSubset{{NotReadyAddresses: addresses("10.0.0.1"), Ports: []corev1.EndpointPort{{Port: 80}}}},
			want:    "",
		},
	}
	store := registrytest.REST(t, NewStorage, "endpoints")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) { ep.Subsets = tt.subsets })
			table, err := store.ConvertToTable(context.Background(), ep, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Endpoints", "Age"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff([]any{"web", tt.want, "<unknown>"}, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateKeepsWhatOlderServersAccepted: as upstream, an update that
// leaves the subsets as stored is not refused for them.
func TestUpdateKeepsWhatOlderServersAccepted(t *testing.T) {
	stored := registrytest.Modified(validEndpoints(), func(ep *corev1.Endpoints) { ep.Subsets[0].Addresses[0].IP = "010.244.1.5" })
	strategy := registrytest.REST(t, NewStorage, "endpoints").UpdateStrategy
	registrytest.ValidateUpdateChanges(t, strategy, registrytest.ErrorPaths, []registrytest.Change[*corev1.Endpoints]{
		{
			Name: "subsets kept", Old: stored,
			Obj:  registrytest.Modified(stored, func(ep *corev1.Endpoints) { ep.Labels = map[string]string{"a": "b"} }),
			Want: []string{},
		},
		{
			Name: "subsets changed", Old: stored,
			Obj:  registrytest.Modified(stored, func(ep *corev1.Endpoints) { ep.Subsets[0].Ports[0].Port = 81 }),
			Want: []string{"subsets[0].addresses[0].ip: Invalid value"},
		},
	})
}
