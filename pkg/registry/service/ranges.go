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
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
)

// Ranges are where Services' addresses come from: kube-apiserver's
// --service-cluster-ip-range and --service-node-port-range.
type Ranges struct {
	// ClusterIPs is an IPv4 network (a masked prefix): IPv6 and
	// dual-stack Services are not served.
	ClusterIPs netip.Prefix
	NodePorts  PortRange
}

// PortRange is ports Base to Base+Size-1, as
// k8s.io/apimachinery/pkg/util/net.PortRange.
type PortRange struct{ Base, Size int32 }

// DefaultRanges are kube-apiserver's defaults: 10.0.0.0/24 and 30000-32767.
var DefaultRanges = Ranges{
	ClusterIPs: netip.MustParsePrefix("10.0.0.0/24"),
	NodePorts:  PortRange{Base: 30000, Size: 2768},
}

// maxCIDRBits is the most host bits a cluster IP range may have
// (upstream's validateClusterIPFlags): 2^20 addresses.
const maxCIDRBits = 20

// Contains reports whether port is in the range.
func (p PortRange) Contains(port int32) bool {
	return port >= p.Base && int64(port)-int64(p.Base) < int64(p.Size)
}

// String is "Base-Last", or "" for an empty range, as upstream's.
func (p PortRange) String() string {
	if p.Size == 0 {
		return ""
	}
	return fmt.Sprintf("%d-%d", p.Base, p.last())
}

// last is the range's highest port (int64: Base+Size-1 may overflow an int32).
func (p PortRange) last() int64 { return int64(p.Base) + int64(p.Size) - 1 }

// KubernetesServiceIP is the default/kubernetes Service's address, the
// first usable one of the cluster IP range, as upstream's: a Service
// gets it only by asking.
func (r Ranges) KubernetesServiceIP() netip.Addr { return r.ClusterIPs.Addr().Next() }

// Validate refuses ranges the allocator cannot serve, in kube-apiserver's
// words where it has them; errors name the flags.
func (r Ranges) Validate() error {
	return errors.Join(r.validateClusterIPs(), r.NodePorts.validate())
}

// validateClusterIPs refuses what upstream's getServiceIPAndRanges and
// validateClusterIPFlags do, and IPv6, which we do not serve.
func (r Ranges) validateClusterIPs() error {
	p := r.ClusterIPs
	switch {
	case !p.IsValid():
		return errors.New("--service-cluster-ip-range must contain at least one valid cidr")
	case p.Addr().Is6():
		return fmt.Errorf("--service-cluster-ip-range %s is IPv6: this server allocates IPv4 cluster IPs only (no IPv6 or dual-stack Services)", p)
	case p != p.Masked():
		return fmt.Errorf("--service-cluster-ip-range %s is not a network address: want %s", p, p.Masked())
	case p.Bits() > 29:
		return errors.New("error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses")
	case 32-p.Bits() > maxCIDRBits:
		return fmt.Errorf("specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= %d", 32-maxCIDRBits)
	}
	return nil
}

// validate refuses what upstream's PortRange.Set does, an empty range
// (upstream's server takes its default instead) and port 0 (a Service's
// "none").
func (p PortRange) validate() error {
	switch {
	case p.Size == 0:
		return errors.New("--service-node-port-range must not be empty")
	case p.Size < 0:
		return fmt.Errorf("end port cannot be less than start port: %d-%d", p.Base, p.last())
	case p.Base < 1:
		return fmt.Errorf("--service-node-port-range %s must start at port 1 or above", p)
	case p.last() > 65535:
		return fmt.Errorf("the port range cannot be greater than 65535: %s", p)
	}
	return nil
}

// usable are the addresses a Service is given when it asks for none: all
// of the range but the network and broadcast addresses and
// KubernetesServiceIP.
func (r Ranges) usable(addr netip.Addr) bool {
	first := r.ClusterIPs.Addr()
	return r.ClusterIPs.Contains(addr) && addr != first && addr != first.Next() &&
		addr.Next().IsValid() && r.ClusterIPs.Contains(addr.Next())
}

// freeIP picks a free address at random, as upstream does, probing on from there.
func (r Ranges) freeIP(used map[netip.Addr]bool) (netip.Addr, bool) {
	size := 1 << (32 - r.ClusterIPs.Bits())
	start := rand.IntN(size)
	base := r.ClusterIPs.Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	for i := range size {
		v := n + uint32((start+i)%size)
		addr := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		if r.usable(addr) && !used[addr] {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

// freeNodePort picks a free node port at random, probing on from there.
func (r Ranges) freeNodePort(used map[int32]bool) (int32, bool) {
	p := r.NodePorts
	start := rand.Int32N(p.Size)
	for i := range p.Size {
		if port := p.Base + (start+i)%p.Size; !used[port] {
			return port, true
		}
	}
	return 0, false
}
