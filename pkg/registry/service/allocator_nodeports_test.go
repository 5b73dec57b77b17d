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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

func TestAllocateNodePorts(t *testing.T) {
	tests := []struct {
		name     string
		services []corev1.Service
		svc      corev1.Service
		// old is the service updated, nil for a create.
		old *corev1.Service
		// wantPorts are the node ports wanted, 0 for any free one.
		wantPorts []int32
		wantErr   []string
		wantMsg   string
	}{
		{name: "allocated", svc: nodePortService(tcp(80, 0), tcp(443, 0)), wantPorts: []int32{0, 0}},
		{name: "explicit kept", svc: nodePortService(tcp(80, 30080), tcp(443, 0)), wantPorts: []int32{30080, 0}},
		{name: "range bounds", svc: nodePortService(tcp(80, 30000), tcp(443, 32767)), wantPorts: []int32{30000, 32767}},
		{
			name:    "below the range",
			svc:     nodePortService(tcp(80, 29999)),
			wantErr: []string{"spec.ports[0].nodePort: FieldValueInvalid"},
			wantMsg: "30000-32767",
		},
		{
			name:    "above the range",
			svc:     nodePortService(tcp(80, 8080), tcp(443, 32768)),
			wantErr: []string{"spec.ports[0].nodePort: FieldValueInvalid"}, // the first only, as upstream's
			wantMsg: "not in the valid range",
		},
		{
			name:     "used by another service",
			services: []corev1.Service{holding("other", "10.0.0.9", 30080)},
			svc:      nodePortService(tcp(80, 30080)),
			wantErr:  []string{"spec.ports[0].nodePort: FieldValueInvalid"},
			wantMsg:  "already allocated",
		},
		{
			name:      "held by the service itself (an update)",
			services:  []corev1.Service{holding("web", "10.0.0.9", 30080)},
			old:       ptr.To(holding("web", "10.0.0.9", 30080)),
			svc:       nodePortService(tcp(80, 30080), tcp(81, 0)),
			wantPorts: []int32{30080, 0},
		},
		{
			name:    "the same port twice for one protocol",
			svc:     nodePortService(tcp(80, 30080), tcp(81, 30080)),
			wantErr: []string{"spec.ports[1].nodePort: FieldValueInvalid"},
			wantMsg: "already allocated",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := tt.svc.DeepCopy()
			a := fakeAllocator(tt.services...)
			recorded, err := a.allocate(context.Background(), svc, tt.old, nil, false)
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
			seen := map[int32]bool{}
			for _, s := range tt.services {
				for _, p := range s.Spec.Ports {
					if s.Name != svc.Name {
						seen[p.NodePort] = true
					}
				}
			}
			for i, p := range svc.Spec.Ports {
				switch want := tt.wantPorts[i]; {
				case want != 0 && p.NodePort != want:
					t.Errorf("ports[%d].nodePort: got %d, want %d", i, p.NodePort, want)
				case p.NodePort < 30000 || p.NodePort > 32767:
					t.Errorf("ports[%d].nodePort: got %d, want one in 30000-32767", i, p.NodePort)
				case seen[p.NodePort]:
					t.Errorf("ports[%d].nodePort: got %d, which is allocated already", i, p.NodePort)
				}
				seen[p.NodePort] = true
			}
			if tt.old == nil && svc.Spec.ClusterIP == "" {
				t.Errorf("clusterIP of a NodePort service: got none, want one allocated")
			}
			// The record holds every port, and the ones new to the
			// service are those recorded.
			held, _ := a.ports.held(context.Background())
			var gained []int32
			for _, p := range svc.Spec.Ports {
				if !held[p.NodePort] {
					t.Errorf("node port %d: not recorded", p.NodePort)
				}
				if tt.old == nil || !slices.ContainsFunc(tt.old.Spec.Ports, func(o corev1.ServicePort) bool { return o.NodePort == p.NodePort }) {
					gained = append(gained, p.NodePort)
				}
			}
			if !slices.Equal(recorded, gained) {
				t.Errorf("recorded %v, want the ports new to the service, %v", recorded, gained)
			}
		})
	}
}

// TestAllocateNodePortsOneFree: two ports and one free node port: the
// first port gets it, the second finds the range full (the first's port
// counts as used).
func TestAllocateNodePortsOneFree(t *testing.T) {
	used := map[int32]bool{}
	for p := range int32(DefaultRanges.NodePorts.Size) {
		used[DefaultRanges.NodePorts.Base+p] = DefaultRanges.NodePorts.Base+p != 30500
	}
	svc := nodePortService(corev1.ServicePort{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP}, corev1.ServicePort{Name: "b", Port: 81, Protocol: corev1.ProtocolTCP})
	err := DefaultRanges.allocateNodePorts(&svc, used, false)
	if got := svc.Spec.Ports[0].NodePort; got != 30500 {
		t.Errorf("ports[0].nodePort: got %d, want 30500", got)
	}
	if got := svc.Spec.Ports[1].NodePort; got != 0 {
		t.Errorf("ports[1].nodePort: got %d, want none", got)
	}
	if want := "Internal error occurred: failed to allocate a nodePort: range is full"; !apierrors.IsInternalError(err) || err.Error() != want {
		t.Errorf("error: got %v, want a 500 %q", err, want)
	}
}

// TestAllocateNodePortsSkipsThoseAskedFor: a node port one port asks for
// is not handed out to a later port of the service (upstream's
// allocator holds it from then on): with it the only free one, the
// range is full.
func TestAllocateNodePortsSkipsThoseAskedFor(t *testing.T) {
	r := Ranges{ClusterIPs: DefaultRanges.ClusterIPs, NodePorts: PortRange{Base: 31000, Size: 10}}
	used := map[int32]bool{}
	for p := range r.NodePorts.Size - 1 {
		used[r.NodePorts.Base+p] = true // all but 31009
	}
	svc := nodePortService(tcp(80, 31009), tcp(81, 0))
	err := r.allocateNodePorts(&svc, used, false)
	if want := "Internal error occurred: failed to allocate a nodePort: range is full"; !apierrors.IsInternalError(err) || err.Error() != want {
		t.Errorf("error: got %v (node ports %d, %d), want a 500 %q", err, svc.Spec.Ports[0].NodePort, svc.Spec.Ports[1].NodePort, want)
	}
}

// TestAllocateSameNodePortForTCPAndUDP: upstream lets the ports of one
// service that share a port number (53/TCP and 53/UDP, as DNS servers
// expose) share one node port too: initNodePorts in
// pkg/registry/core/service/storage/alloc.go allocates it once per port
// number, and validation only rejects a node port repeated for the same
// protocol.
func TestAllocateSameNodePortForTCPAndUDP(t *testing.T) {
	svc := nodePortService(
		corev1.ServicePort{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, NodePort: 30053},
		corev1.ServicePort{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30053},
	)
	if err := fakeAllocator().allocateNew(context.Background(), &svc, false); err != nil {
		t.Fatalf("allocate: got error %v, want none", err)
	}
	for i, p := range svc.Spec.Ports {
		if p.NodePort != 30053 {
			t.Errorf("ports[%d].nodePort: got %d, want 30053", i, p.NodePort)
		}
	}
}

func TestAllocateLoadBalancerNodePorts(t *testing.T) {
	tests := []struct {
		name          string
		allocate      *bool
		wantNodePorts bool
	}{
		{name: "allocateLoadBalancerNodePorts unset", allocate: nil, wantNodePorts: true},
		{name: "allocateLoadBalancerNodePorts true", allocate: ptr.To(true), wantNodePorts: true},
		{name: "allocateLoadBalancerNodePorts false", allocate: ptr.To(false), wantNodePorts: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := nodePortService(corev1.ServicePort{Port: 80, Protocol: corev1.ProtocolTCP})
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			svc.Spec.AllocateLoadBalancerNodePorts = tt.allocate
			if err := fakeAllocator().allocateNew(context.Background(), &svc, false); err != nil {
				t.Fatalf("allocate: got error %v, want none", err)
			}
			if got := svc.Spec.Ports[0].NodePort != 0; got != tt.wantNodePorts {
				t.Errorf("node port allocated: got %v (%d), want %v", got, svc.Spec.Ports[0].NodePort, tt.wantNodePorts)
			}
			if svc.Spec.ClusterIP == "" {
				t.Errorf("clusterIP: got none, want one")
			}
		})
	}
	t.Run("ClusterIP services get none", func(t *testing.T) {
		svc := nodePortService(corev1.ServicePort{Port: 80, Protocol: corev1.ProtocolTCP})
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		if err := fakeAllocator().allocateNew(context.Background(), &svc, false); err != nil {
			t.Fatalf("allocate: got error %v, want none", err)
		}
		if got := svc.Spec.Ports[0].NodePort; got != 0 {
			t.Errorf("nodePort of a ClusterIP service: got %d, want none", got)
		}
	})
}

// TestAllocateStopsAtTheFirstRefusal: as upstream's allocator (the
// cluster IP, then the node ports in order), the Invalid error names the
// first field it refuses, not every one.
func TestAllocateStopsAtTheFirstRefusal(t *testing.T) {
	svc := nodePortService(corev1.ServicePort{Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 80})
	svc.Spec.ClusterIP = "192.168.0.1"
	err := fakeAllocator().allocateNew(context.Background(), &svc, false)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("allocate: got error %v, want Invalid", err)
	}
	want := []string{"spec.clusterIPs: FieldValueInvalid"}
	if diff := cmp.Diff(want, errorSummary(t, err)); diff != "" {
		t.Errorf("error causes (-want +got):\n%s", diff)
	}
	if got := err.(apierrors.APIStatus).Status().Details.Kind; got != "Service" {
		t.Errorf("error kind: got %q, want Service", got)
	}
}
