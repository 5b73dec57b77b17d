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
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// fakeAllocator returns an allocator of DefaultRanges whose list returns services.
func fakeAllocator(services ...corev1.Service) *allocator {
	return fakeAllocatorOf(DefaultRanges, services...)
}

// fakeAllocatorOf returns an allocator of ranges whose list returns
// services, and whose record of node ports holds theirs.
func fakeAllocatorOf(ranges Ranges, services ...corev1.Service) *allocator {
	record := map[int32]bool{}
	for _, svc := range services {
		_, ports := holds(&svc)
		for _, p := range ports {
			record[p] = true
		}
	}
	return &allocator{ranges: ranges, ports: &memPorts{ports: record},
		list: func(context.Context, bool) ([]corev1.Service, error) { return services, nil }}
}

// holding returns a service (in namespace default) holding ip and nodePorts.
func holding(name, ip string, nodePorts ...int32) corev1.Service {
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	if ip != "" {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
	}
	for i, p := range nodePorts {
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprint("p", i), Port: 80 + int32(i), Protocol: corev1.ProtocolTCP, NodePort: p})
	}
	return svc
}

// usableAddrs are the addresses of r's cluster IP range allocate may
// hand out: all but the network address, the first host (the kubernetes
// service's) and the broadcast address.
func usableAddrs(r Ranges) []netip.Addr {
	var all []netip.Addr
	for a := r.ClusterIPs.Addr(); a.IsValid() && r.ClusterIPs.Contains(a); a = a.Next() {
		all = append(all, a)
	}
	return all[2 : len(all)-1]
}

// errorSummary returns "field: type" for each cause of an Invalid error.
func errorSummary(t *testing.T, err error) []string {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error: got %v, want an API status error with details", err)
	}
	out := []string{}
	for _, c := range status.Status().Details.Causes {
		out = append(out, fmt.Sprintf("%s: %s", c.Field, c.Type))
	}
	return out
}

func TestAllocateClusterIP(t *testing.T) {
	tests := []struct {
		name string
		// services are the stored services.
		services []corev1.Service
		svc      corev1.Service
		// wantIP is the address wanted; "" for any usable free one.
		wantIP string
		// wantErr is the error wanted: "field: type" and a part of its message.
		wantErr []string
		wantMsg string
	}{
		{name: "empty: allocated", svc: holding("web", "")},
		{name: "empty, others allocated: a free one", services: []corev1.Service{holding("a", "10.0.0.2"), holding("b", "10.0.0.3")}, svc: holding("web", "")},
		{name: "explicit free", services: []corev1.Service{holding("a", "10.0.0.2")}, svc: holding("web", "10.0.0.50"), wantIP: "10.0.0.50"},
		{name: "explicit in clusterIPs only", svc: corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: corev1.ServiceSpec{ClusterIPs: []string{"10.0.0.60"}}}, wantIP: "10.0.0.60"},
		{
			name:     "explicit used by another service",
			services: []corev1.Service{holding("a", "10.0.0.50")},
			svc:      holding("web", "10.0.0.50"),
			wantErr:  []string{"spec.clusterIPs: FieldValueInvalid"},
			wantMsg:  "already allocated",
		},
		{
			name:     "explicit used by another service in another namespace",
			services: []corev1.Service{func() corev1.Service { s := holding("web", "10.0.0.50"); s.Namespace = "other"; return s }()},
			svc:      holding("web", "10.0.0.50"),
			wantErr:  []string{"spec.clusterIPs: FieldValueInvalid"},
			wantMsg:  "already allocated",
		},
		{name: "explicit held by the service itself", services: []corev1.Service{holding("web", "10.0.0.50")}, svc: holding("web", "10.0.0.50"), wantIP: "10.0.0.50"},
		{name: "outside the range", svc: holding("web", "10.0.1.5"), wantErr: []string{"spec.clusterIPs: FieldValueInvalid"}, wantMsg: "does not match the current range"},
		{name: "network address", svc: holding("web", "10.0.0.0"), wantErr: []string{"spec.clusterIPs: FieldValueInvalid"}, wantMsg: "does not match the current range"},
		{name: "the kubernetes service's address, asked for", svc: holding("kubernetes", "10.0.0.1"), wantIP: "10.0.0.1"},
		{
			name:     "the kubernetes service's address, held",
			services: []corev1.Service{holding("kubernetes", "10.0.0.1")},
			svc:      holding("web", "10.0.0.1"),
			wantErr:  []string{"spec.clusterIPs: FieldValueInvalid"},
			wantMsg:  "already allocated",
		},
		{name: "broadcast address", svc: holding("web", "10.0.0.255"), wantErr: []string{"spec.clusterIPs: FieldValueInvalid"}, wantMsg: "does not match the current range"},
		{name: "IPv6", svc: holding("web", "fd00::5"), wantErr: []string{"spec.clusterIPs[0]: FieldValueInvalid"}, wantMsg: "IPv6 is not configured on this cluster"},
		{name: "not an address", svc: holding("web", "ten.zero"), wantErr: []string{"spec.clusterIPs[0]: FieldValueInvalid"}, wantMsg: "valid IP"},
		{name: "headless", svc: holding("web", corev1.ClusterIPNone), wantIP: corev1.ClusterIPNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := tt.svc.DeepCopy()
			err := fakeAllocator(tt.services...).allocateNew(context.Background(), svc, false)
			if tt.wantErr != nil {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("allocate: got error %v, want Invalid", err)
				}
				if diff := cmp.Diff(tt.wantErr, errorSummary(t, err)); diff != "" {
					t.Errorf("error causes (-want +got):\n%s", diff)
				}
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error: got %q, want it to contain %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("allocate: got error %v, want none", err)
			}
			ip := svc.Spec.ClusterIP
			if tt.wantIP != "" && ip != tt.wantIP {
				t.Errorf("clusterIP: got %q, want %q", ip, tt.wantIP)
			}
			if tt.wantIP == "" {
				addr, err := netip.ParseAddr(ip)
				if err != nil || !DefaultRanges.usable(addr) {
					t.Errorf("clusterIP: got %q, want a usable address of %s", ip, DefaultRanges.ClusterIPs)
				}
				for _, s := range tt.services {
					if s.Spec.ClusterIP == ip {
						t.Errorf("clusterIP: got %q, which service %s holds", ip, s.Name)
					}
				}
			}
			if diff := cmp.Diff([]string{ip}, svc.Spec.ClusterIPs); diff != "" {
				t.Errorf("clusterIPs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllocateUntilFull gives out every address (or node port) of a
// range, one service at a time, and then fails with upstream's 500: none
// is ever handed out twice, or outside the range.
func TestAllocateUntilFull(t *testing.T) {
	small := Ranges{ClusterIPs: netip.MustParsePrefix("10.96.0.0/29"), NodePorts: PortRange{Base: 31000, Size: 10}}
	tests := []struct {
		name   string
		ranges Ranges
		// nodePorts has each service ask for a node port too.
		nodePorts bool
		// want is how many services the range has room for.
		want    int
		wantErr string
	}{
		{name: "cluster IPs of 10.0.0.0/24", ranges: DefaultRanges, want: 253,
			wantErr: `Internal error occurred: failed to allocate a serviceIP for Service "one-too-many": range is full`},
		{name: "cluster IPs of 10.96.0.0/29", ranges: small, want: 5,
			wantErr: `Internal error occurred: failed to allocate a serviceIP for Service "one-too-many": range is full`},
		{name: "node ports 31000-31009", ranges: Ranges{ClusterIPs: netip.MustParsePrefix("10.96.0.0/16"), NodePorts: small.NodePorts}, nodePorts: true, want: 10,
			wantErr: "Internal error occurred: failed to allocate a nodePort: range is full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stored []corev1.Service
			a := &allocator{ranges: tt.ranges, list: func(context.Context, bool) ([]corev1.Service, error) { return stored, nil }}
			newService := func(name string) corev1.Service {
				if tt.nodePorts {
					return holding(name, "", 0)
				}
				return holding(name, "")
			}
			seen := map[string]bool{}
			for i := range tt.want {
				svc := newService(fmt.Sprint("svc-", i))
				if err := a.allocateNew(context.Background(), &svc, false); err != nil {
					t.Fatalf("allocate #%d: got error %v, want none", i, err)
				}
				checkAllocated(t, tt.ranges, &svc, seen)
				stored = append(stored, svc)
			}
			svc := newService("one-too-many")
			if err := a.allocateNew(context.Background(), &svc, false); !apierrors.IsInternalError(err) || err.Error() != tt.wantErr {
				t.Fatalf("allocate in a full range: got error %v, want 500 %q", err, tt.wantErr)
			}
		})
	}
}

// checkAllocated fails t unless svc's cluster IP and node ports are
// usable ones of r and not in seen, and adds them to seen.
func checkAllocated(t *testing.T, r Ranges, svc *corev1.Service, seen map[string]bool) {
	t.Helper()
	if addr, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !r.usable(addr) || seen[svc.Spec.ClusterIP] {
		t.Errorf("%s: clusterIP: got %q, want a free usable address of %s", svc.Name, svc.Spec.ClusterIP, r.ClusterIPs)
	}
	seen[svc.Spec.ClusterIP] = true
	for i, p := range svc.Spec.Ports {
		if port := fmt.Sprint(p.NodePort); !r.NodePorts.Contains(p.NodePort) || seen[port] {
			t.Errorf("%s: ports[%d].nodePort: got %d, want a free one of %s", svc.Name, i, p.NodePort, r.NodePorts)
		} else {
			seen[port] = true
		}
	}
}

func TestAllocateListError(t *testing.T) {
	want := errors.New("etcd is down")
	a := &allocator{ranges: DefaultRanges, list: func(context.Context, bool) ([]corev1.Service, error) { return nil, want }}
	svc := holding("web", "")
	if err := a.allocateNew(context.Background(), &svc, false); !errors.Is(err, want) {
		t.Errorf("allocate: got error %v, want the list's error", err)
	}
}

func TestAllocateSkipsExternalName(t *testing.T) {
	svc := corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", Ports: []corev1.ServicePort{{Port: 5432}}},
	}
	want := svc.DeepCopy()
	listed := false
	a := &allocator{ranges: DefaultRanges, list: func(context.Context, bool) ([]corev1.Service, error) { listed = true; return nil, nil }}
	if err := a.allocateNew(context.Background(), &svc, false); err != nil {
		t.Fatalf("allocate: got error %v, want none", err)
	}
	if diff := cmp.Diff(want, &svc); diff != "" {
		t.Errorf("ExternalName service after allocate (-want +got):\n%s", diff)
	}
	if listed {
		t.Errorf("list: called; an ExternalName Service needs nothing")
	}
}

func nodePortService(ports ...corev1.ServicePort) corev1.Service {
	return corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports},
	}
}

// tcp is a TCP port named p<port>, with nodePort if not 0.
func tcp(port, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{Name: fmt.Sprint("p", port), Port: port, Protocol: corev1.ProtocolTCP, NodePort: nodePort}
}

// TestDryRunAllocations: a dry run answers as kube-apiserver 1.37's
// allocators do (pkg/registry/core/service/ipallocator and portallocator
// in k8s.io/kubernetes): an address not asked for is shown as the range's
// first, 10.0.0.0; one asked for is checked against the range but not
// against the Services holding it; node ports not asked for count
// on from the highest this service has yet, or from 32769; one asked for is
// checked against the Services holding it, but not against the range.
func TestDryRunAllocations(t *testing.T) {
	stored := fakeAllocator(holding("other", "10.0.0.9", 30080))
	for _, tt := range []struct {
		name      string
		svc       corev1.Service
		wantIP    string
		wantPorts []int32
		wantErr   []string
		wantMsg   string
	}{
		{name: "any address", svc: holding("new", ""), wantIP: "10.0.0.0"},
		{name: "an address another holds", svc: holding("new", "10.0.0.9"), wantIP: "10.0.0.9"},
		{name: "an address outside the range", svc: holding("new", "10.0.1.5"), wantErr: []string{"spec.clusterIPs: FieldValueInvalid"},
			wantMsg: "failed to allocate IP 10.0.1.5: the provided IP (10.0.1.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24"},
		{name: "node ports", svc: nodePortService(tcp(80, 0), tcp(81, 30600), tcp(82, 0)), wantIP: "10.0.0.0", wantPorts: []int32{32769, 30600, 32770}},
		{name: "node ports after one asked for", svc: nodePortService(tcp(80, 30600), tcp(81, 0)), wantIP: "10.0.0.0", wantPorts: []int32{30600, 30601}},
		{name: "a node port outside the range", svc: nodePortService(tcp(80, 40000)), wantIP: "10.0.0.0", wantPorts: []int32{40000}},
		{name: "a node port another holds", svc: nodePortService(tcp(80, 30080)), wantErr: []string{"spec.ports[0].nodePort: FieldValueInvalid"}, wantMsg: "provided port is already allocated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := tt.svc
			err := stored.allocateNew(context.Background(), &svc, true)
			if tt.wantErr != nil {
				if diff := cmp.Diff(tt.wantErr, errorSummary(t, err)); diff != "" {
					t.Errorf("error causes (-want +got):\n%s", diff)
				}
				if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error: got %v, want it to contain %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("allocate: %v", err)
			}
			var ports []int32
			for _, p := range svc.Spec.Ports {
				ports = append(ports, p.NodePort)
			}
			if svc.Spec.ClusterIP != tt.wantIP || (tt.wantPorts != nil && !slices.Equal(ports, tt.wantPorts)) {
				t.Errorf("got %s and node ports %v, want %s and %v", svc.Spec.ClusterIP, ports, tt.wantIP, tt.wantPorts)
			}
		})
	}
}

// ipRecords is an IPAddresses that holds some addresses already: what
// other servers recorded since this one listed.
type ipRecords struct {
	IPAddresses
	held             map[string]bool
	created, deleted []string
	// listed, if set, is called with each List's options.
	listed func(*metainternalversion.ListOptions)
}

func (r *ipRecords) Delete(_ context.Context, name string, _ rest.ValidateObjectFunc, _ *metav1.DeleteOptions) (runtime.Object, bool, error) {
	delete(r.held, name)
	r.deleted = append(r.deleted, name)
	return nil, true, nil
}

func (r *ipRecords) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	name := obj.(*networkingv1.IPAddress).Name
	if r.held[name] {
		return nil, apierrors.NewAlreadyExists(networkingv1.Resource("ipaddresses"), name)
	}
	r.held[name] = true
	r.created = append(r.created, name)
	return obj, nil
}

func (r *ipRecords) List(_ context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if r.listed != nil {
		r.listed(opts)
	}
	return &networkingv1.IPAddressList{}, nil // as listed before the others recorded theirs
}
