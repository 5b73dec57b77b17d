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
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// ranges makes Ranges of a cluster IP range and node ports base to base+size-1.
func ranges(clusterIPs string, base, size int32) Ranges {
	return Ranges{ClusterIPs: netip.MustParsePrefix(clusterIPs), NodePorts: PortRange{Base: base, Size: size}}
}

// TestRangesValidate: the ranges the allocator cannot serve are refused, in
// kube-apiserver's words where it has them (cmd/kube-apiserver/app/options
// and k8s.io/apimachinery's PortRange.Set), every one at once.
func TestRangesValidate(t *testing.T) {
	tests := []struct {
		name   string
		ranges Ranges
		// wantErr is the whole error; "" for none.
		wantErr string
	}{
		{name: "the defaults", ranges: DefaultRanges},
		{name: "10.96.0.0/16 and 31000-31009", ranges: ranges("10.96.0.0/16", 31000, 10)},
		{name: "the smallest range: 8 addresses, 1 port", ranges: ranges("192.168.0.8/29", 30000, 1)},
		{name: "the largest range: 2^20 addresses, every port", ranges: ranges("10.16.0.0/12", 1, 65535)},
		{name: "no cluster IP range", ranges: Ranges{NodePorts: DefaultRanges.NodePorts},
			wantErr: "--service-cluster-ip-range must contain at least one valid cidr"},
		{name: "IPv6", ranges: ranges("fd00::/108", 30000, 2768),
			wantErr: "--service-cluster-ip-range fd00::/108 is IPv6: this server allocates IPv4 cluster IPs only (no IPv6 or dual-stack Services)"},
		{name: "IPv4-mapped IPv6", ranges: ranges("::ffff:10.0.0.0/120", 30000, 2768),
			wantErr: "--service-cluster-ip-range ::ffff:10.0.0.0/120 is IPv6: this server allocates IPv4 cluster IPs only (no IPv6 or dual-stack Services)"},
		{name: "not a network address", ranges: ranges("10.0.0.5/24", 30000, 2768),
			wantErr: "--service-cluster-ip-range 10.0.0.5/24 is not a network address: want 10.0.0.0/24"},
		{name: "4 addresses", ranges: ranges("10.0.0.0/30", 30000, 2768),
			wantErr: "error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses"},
		{name: "1 address", ranges: ranges("10.0.0.7/32", 30000, 2768),
			wantErr: "error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses"},
		{name: "2^21 addresses", ranges: ranges("10.0.0.0/11", 30000, 2768),
			wantErr: "specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12"},
		{name: "no node ports", ranges: Ranges{ClusterIPs: DefaultRanges.ClusterIPs},
			wantErr: "--service-node-port-range must not be empty"},
		{name: "node ports ending before they start", ranges: ranges("10.0.0.0/24", 32767, -2767),
			wantErr: "end port cannot be less than start port: 32767-29999"},
		{name: "node port 0", ranges: ranges("10.0.0.0/24", 0, 100),
			wantErr: "--service-node-port-range 0-99 must start at port 1 or above"},
		{name: "node ports past 65535", ranges: ranges("10.0.0.0/24", 65000, 1000),
			wantErr: "the port range cannot be greater than 65535: 65000-65999"},
		{name: "both wrong", ranges: ranges("fd00::/108", 65000, 1000),
			wantErr: "--service-cluster-ip-range fd00::/108 is IPv6: this server allocates IPv4 cluster IPs only (no IPv6 or dual-stack Services)\n" +
				"the port range cannot be greater than 65535: 65000-65999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if err := tt.ranges.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("Validate(): got error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestNewStorageRefusesInvalidRanges: the storage is not made of ranges
// that Validate refuses.
func TestNewStorageRefusesInvalidRanges(t *testing.T) {
	_, err := New(registrytest.NewMemStorage().Options("services"), nil, ranges("10.0.0.0/30", 30000, 2768))
	if want := "at least 8 IP addresses"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("New of a /30: got error %v, want one containing %q", err, want)
	}
}

func TestKubernetesServiceIP(t *testing.T) {
	tests := []struct {
		ranges Ranges
		want   string
	}{
		{ranges: DefaultRanges, want: "10.0.0.1"},
		{ranges: ranges("10.96.0.0/16", 31000, 10), want: "10.96.0.1"},
		{ranges: ranges("192.168.8.8/29", 31000, 10), want: "192.168.8.9"},
	}
	for _, tt := range tests {
		t.Run(tt.ranges.ClusterIPs.String(), func(t *testing.T) {
			if got := tt.ranges.KubernetesServiceIP(); got.String() != tt.want {
				t.Errorf("KubernetesServiceIP(): got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPortRange(t *testing.T) {
	tests := []struct {
		name       string
		ports      PortRange
		wantString string
		in, out    []int32
	}{
		{name: "default", ports: DefaultRanges.NodePorts, wantString: "30000-32767", in: []int32{30000, 31000, 32767}, out: []int32{0, 29999, 32768}},
		{name: "ten", ports: PortRange{Base: 31000, Size: 10}, wantString: "31000-31009", in: []int32{31000, 31009}, out: []int32{30999, 31010}},
		{name: "one", ports: PortRange{Base: 31000, Size: 1}, wantString: "31000-31000", in: []int32{31000}, out: []int32{30999, 31001}},
		{name: "empty", ports: PortRange{}, wantString: "", out: []int32{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ports.String(); got != tt.wantString {
				t.Errorf("String(): got %q, want %q", got, tt.wantString)
			}
			for _, want := range []bool{true, false} {
				for _, port := range map[bool][]int32{true: tt.in, false: tt.out}[want] {
					if got := tt.ports.Contains(port); got != want {
						t.Errorf("Contains(%d): got %v, want %v", port, got, want)
					}
				}
			}
		})
	}
}

func TestUsable(t *testing.T) {
	other := ranges("10.96.0.0/16", 31000, 10)
	tests := []struct {
		ranges Ranges
		addr   string
		want   bool
	}{
		{ranges: DefaultRanges, addr: "10.0.0.0", want: false},
		{ranges: DefaultRanges, addr: "10.0.0.1", want: false},
		{ranges: DefaultRanges, addr: "10.0.0.2", want: true},
		{ranges: DefaultRanges, addr: "10.0.0.128", want: true},
		{ranges: DefaultRanges, addr: "10.0.0.254", want: true},
		{ranges: DefaultRanges, addr: "10.0.0.255", want: false},
		{ranges: DefaultRanges, addr: "10.0.1.7", want: false},
		{ranges: DefaultRanges, addr: "9.255.255.255", want: false}, // the one before the range
		{ranges: other, addr: "10.96.0.0", want: false},
		{ranges: other, addr: "10.96.0.1", want: false},
		{ranges: other, addr: "10.96.0.2", want: true},
		{ranges: other, addr: "10.96.0.255", want: true},
		{ranges: other, addr: "10.96.255.254", want: true},
		{ranges: other, addr: "10.96.255.255", want: false},
		{ranges: other, addr: "10.0.0.5", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.ranges.ClusterIPs.String()+"/"+tt.addr, func(t *testing.T) {
			if got := tt.ranges.usable(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("usable(%s): got %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	for _, r := range []Ranges{DefaultRanges, ranges("10.96.0.0/29", 31000, 10)} {
		want := 1<<(32-r.ClusterIPs.Bits()) - 3
		if got := len(usableAddrs(r)); got != want {
			t.Errorf("usable addresses in %s: got %d, want %d", r.ClusterIPs, got, want)
		}
	}
}

func TestFreeIP(t *testing.T) {
	for _, r := range []Ranges{DefaultRanges, ranges("10.96.0.0/29", 31000, 10)} {
		t.Run(r.ClusterIPs.String()+"/empty range", func(t *testing.T) {
			for range 50 {
				if addr, ok := r.freeIP(map[netip.Addr]bool{}); !ok || !r.usable(addr) {
					t.Fatalf("freeIP: got (%v, %v), want a usable address of %s", addr, ok, r.ClusterIPs)
				}
			}
		})
		t.Run(r.ClusterIPs.String()+"/one address free", func(t *testing.T) {
			addrs := usableAddrs(r)
			free := addrs[len(addrs)/2]
			used := map[netip.Addr]bool{}
			for _, a := range addrs {
				used[a] = a != free
			}
			// The search starts at random: whichever start, it finds the one free address.
			for range 100 {
				if addr, ok := r.freeIP(used); !ok || addr != free {
					t.Fatalf("freeIP with only %s free: got (%v, %v), want (%v, true)", free, addr, ok, free)
				}
			}
		})
		t.Run(r.ClusterIPs.String()+"/range full", func(t *testing.T) {
			used := map[netip.Addr]bool{}
			for _, a := range usableAddrs(r) {
				used[a] = true
			}
			if addr, ok := r.freeIP(used); ok {
				t.Errorf("freeIP of a full range: got (%v, true), want none", addr)
			}
		})
	}
}

func TestFreeNodePort(t *testing.T) {
	tests := []struct {
		ranges Ranges
		free   int32
	}{
		{ranges: DefaultRanges, free: 31234},
		{ranges: ranges("10.96.0.0/16", 31000, 10), free: 31009},
		{ranges: ranges("10.96.0.0/16", 31000, 1), free: 31000},
	}
	for _, tt := range tests {
		t.Run(tt.ranges.NodePorts.String(), func(t *testing.T) {
			used := map[int32]bool{}
			for p := range tt.ranges.NodePorts.Size {
				used[tt.ranges.NodePorts.Base+p] = tt.ranges.NodePorts.Base+p != tt.free
			}
			for range 100 {
				if p, ok := tt.ranges.freeNodePort(used); !ok || p != tt.free {
					t.Fatalf("freeNodePort with only %d free: got (%d, %v), want (%d, true)", tt.free, p, ok, tt.free)
				}
			}
			used[tt.free] = true
			if p, ok := tt.ranges.freeNodePort(used); ok {
				t.Errorf("freeNodePort of a full range: got (%d, true), want none", p)
			}
		})
	}
}

// TestAllocateInAnotherRange: with ranges other than the defaults,
// addresses and node ports come from them, and a request outside them is
// refused with the configured range in the message (as upstream's, the
// cluster IP's only in a dry run: else "does not match the current
// range"). A dry run's node ports count from 32769 whatever the range, as
// upstream's PortAllocationOperation does.
func TestAllocateInAnotherRange(t *testing.T) {
	r := ranges("10.96.0.0/16", 31000, 10)
	stored := []corev1.Service{holding("other", "10.96.3.4", 31005)}
	tests := []struct {
		name   string
		svc    corev1.Service
		dryRun bool
		// wantIP is the address wanted; "" for any free usable one.
		wantIP string
		// wantPorts are the node ports wanted, 0 for any free one of the range.
		wantPorts []int32
		// wantCode and wantErr are the error's HTTP code and a part of its message.
		wantCode int32
		wantErr  string
	}{
		{name: "any address", svc: holding("web", "")},
		{name: "an address of the range", svc: holding("web", "10.96.200.7"), wantIP: "10.96.200.7"},
		{name: "the kubernetes service's address", svc: holding("kubernetes", "10.96.0.1"), wantIP: "10.96.0.1"},
		{name: "an address of the default range", svc: holding("web", "10.0.0.5"), wantCode: 422,
			wantErr: "failed to allocate IP 10.0.0.5: the provided network does not match the current range"},
		{name: "the broadcast address", svc: holding("web", "10.96.255.255"), wantCode: 422,
			wantErr: "failed to allocate IP 10.96.255.255: the provided network does not match the current range"},
		{name: "an address another holds", svc: holding("web", "10.96.3.4"), wantCode: 422, wantErr: "provided IP is already allocated"},
		{name: "dry run: any address", svc: holding("web", ""), dryRun: true, wantIP: "10.96.0.0"},
		{name: "dry run: an address of the default range", svc: holding("web", "10.0.0.5"), dryRun: true, wantCode: 422,
			wantErr: "the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/16"},
		// Asked for first: as upstream's, an earlier port given any node
		// port may take one a later port asks for (it is then refused).
		{name: "node ports", svc: nodePortService(tcp(80, 31009), tcp(81, 31000), tcp(82, 0)), wantPorts: []int32{31009, 31000, 0}},
		{name: "a node port of the default range", svc: nodePortService(tcp(80, 30080)), wantCode: 422,
			wantErr: "spec.ports[0].nodePort: Invalid value: 30080: provided port is not in the valid range. The range of valid ports is 31000-31009"},
		{name: "a node port just above the range", svc: nodePortService(tcp(80, 31010)), wantCode: 422,
			wantErr: "Invalid value: 31010: provided port is not in the valid range. The range of valid ports is 31000-31009"},
		{name: "a node port another holds", svc: nodePortService(tcp(80, 31005)), wantCode: 422, wantErr: "provided port is already allocated"},
		{name: "dry run: node ports", svc: nodePortService(tcp(80, 0), tcp(81, 0)), dryRun: true, wantIP: "10.96.0.0", wantPorts: []int32{32769, 32770}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := tt.svc.DeepCopy()
			err := fakeAllocatorOf(r, stored...).allocateNew(context.Background(), svc, tt.dryRun)
			if tt.wantErr != "" {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tt.wantCode || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("allocate: got error %v, want %d containing %q", err, tt.wantCode, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("allocate: got error %v, want none", err)
			}
			checkAllocatedIn(t, r, svc, tt.wantIP, tt.wantPorts, tt.dryRun)
		})
	}
}

// checkAllocatedIn fails t unless svc has wantIP (any usable one of r
// other than stored's 10.96.3.4 if "") and wantPorts (any free one of r
// if 0; all as wanted in a dry run).
func checkAllocatedIn(t *testing.T, r Ranges, svc *corev1.Service, wantIP string, wantPorts []int32, dryRun bool) {
	t.Helper()
	ip := svc.Spec.ClusterIP
	if addr, err := netip.ParseAddr(ip); wantIP == "" && (err != nil || !r.usable(addr) || ip == "10.96.3.4") {
		t.Errorf("clusterIP: got %q, want a free usable address of %s", ip, r.ClusterIPs)
	}
	if wantIP != "" && ip != wantIP {
		t.Errorf("clusterIP: got %q, want %q", ip, wantIP)
	}
	var ports []int32
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.NodePort)
	}
	if dryRun {
		if !slices.Equal(ports, wantPorts) {
			t.Errorf("node ports: got %v, want %v", ports, wantPorts)
		}
		return
	}
	for i, want := range wantPorts {
		if got := ports[i]; (want != 0 && got != want) || (want == 0 && (!r.NodePorts.Contains(got) || got == 31005 || slices.Contains(wantPorts, got))) {
			t.Errorf("ports[%d].nodePort: got %d, want %d (0: any free one of %s)", i, got, want, r.NodePorts)
		}
	}
}
