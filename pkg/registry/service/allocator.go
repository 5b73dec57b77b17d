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
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// allocator hands out cluster IPs and node ports. As upstream's, it
// records each cluster IP as an IPAddress, whose create fails if another
// server took the address, and the node ports in one record changed by
// compare-and-swap (portRecord). An allocation that picks a cluster IP
// lists the services and IPAddresses from the watch cache (as upstream's
// allocator reads its informer's), where a stale list costs a retry, not
// a duplicate. One that asks for an address reads consistently: a stale
// list could still hold a Service just deleted, and refuse its address
// (so does one the stale lists show no free address for). Allocations
// run one at a time (under mu), and what they hand out is pending until
// the service's write ends; the writes (of IPAddresses and services) run
// in parallel, outside mu.
type allocator struct {
	// ranges are where cluster IPs and node ports come from.
	ranges Ranges
	mu     sync.Mutex
	// list returns every stored service, in all namespaces; consistent
	// asks for a consistent read, else the watch cache's may be stale.
	list func(ctx context.Context, consistent bool) ([]corev1.Service, error)
	// ips, if set, records each cluster IP (see claim).
	ips IPAddresses
	// ports records the node ports handed out.
	ports portRecord
	// pendingIPs and pendingPorts count the services being written that
	// hold each address and node port, and leaks the repairs in a row
	// that found each port recorded but held by no Service (guarded by
	// mu, as releasing).
	pendingIPs   map[netip.Addr]int
	pendingPorts map[int32]int
	leaks        map[int32]int
	// releasing is what updates being written may give up, by Service.
	releasing map[types.UID]givenUp
}

// holds returns the cluster IPs and node ports svc holds, its health
// check node port among them.
func holds(svc *corev1.Service) (ips []netip.Addr, ports []int32) {
	for _, ip := range svc.Spec.ClusterIPs {
		if addr, err := netip.ParseAddr(ip); err == nil {
			ips = append(ips, addr)
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			ports = append(ports, p.NodePort)
		}
	}
	if needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != 0 {
		ports = append(ports, svc.Spec.HealthCheckNodePort)
	}
	return ips, ports
}

// asksForIP reports whether svc names its cluster IP.
func asksForIP(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != "" || len(svc.Spec.ClusterIPs) > 0
}

// listOptions asks for a consistent list, or else for the watch cache's
// (any resourceVersion), which may be stale.
func listOptions(consistent bool) *metainternalversion.ListOptions {
	if consistent {
		return &metainternalversion.ListOptions{}
	}
	return &metainternalversion.ListOptions{ResourceVersion: "0"}
}

// hold marks svc's cluster IPs and node ports pending until the returned
// func is called (both with mu held).
func (a *allocator) hold(svc *corev1.Service) (unhold func()) {
	if a.pendingIPs == nil {
		a.pendingIPs, a.pendingPorts = map[netip.Addr]int{}, map[int32]int{}
	}
	ips, ports := holds(svc)
	for _, ip := range ips {
		a.pendingIPs[ip]++
	}
	for _, port := range ports {
		a.pendingPorts[port]++
	}
	return func() {
		for _, ip := range ips {
			if a.pendingIPs[ip]--; a.pendingIPs[ip] == 0 {
				delete(a.pendingIPs, ip)
			}
		}
		for _, port := range ports {
			if a.pendingPorts[port]--; a.pendingPorts[port] == 0 {
				delete(a.pendingPorts, port)
			}
		}
	}
}

// used returns the cluster IPs stored services hold, but for self, those
// pending, and the addresses in taken; consistent asks for consistent
// lists, else the watch cache's may be stale.
func (a *allocator) used(ctx context.Context, self *corev1.Service, taken map[netip.Addr]bool, consistent bool) (map[netip.Addr]bool, error) {
	services, err := a.list(ctx, consistent)
	if err != nil {
		return nil, err
	}
	ips, err := a.recordedIPs(ctx, consistent)
	if err != nil {
		return nil, err
	}
	for addr := range taken {
		ips[addr] = true
	}
	for addr := range a.pendingIPs {
		ips[addr] = true
	}
	for _, s := range services {
		if s.Namespace == self.Namespace && s.Name == self.Name {
			continue
		}
		held, _ := holds(&s)
		for _, addr := range held {
			ips[addr] = true
		}
	}
	return ips, nil
}

// allocate fills in svc's cluster IP and node ports where it needs them
// and has none, and checks the ones it asked for; it hands out no address
// in taken. An update (old, else nil) keeps old's cluster IP, and the
// node ports old holds are svc's to keep. As upstream's, it stops at the
// first refusal (an Invalid error; a full range is a 500). It returns the
// node ports it recorded. A dry run records nothing and does as
// upstream's: a cluster IP asked for is checked against the range only,
// one not asked for is shown as the range's first address, and node
// ports not asked for as 32769, 32770 and so on.
func (a *allocator) allocate(ctx context.Context, svc, old *corev1.Service, taken map[netip.Addr]bool, dryRun bool) ([]int32, error) {
	if needsClusterIP(svc) && (old == nil || !needsClusterIP(old)) {
		if err := a.allocateIP(ctx, svc, taken, dryRun); err != nil {
			return nil, err
		}
	}
	if !needsNodePorts(svc) && !needsHealthCheck(svc) {
		return nil, nil
	}
	return a.recordNodePorts(ctx, svc, old, dryRun)
}

// allocateIP fills in svc's cluster IP, or checks the one it asks for.
func (a *allocator) allocateIP(ctx context.Context, svc *corev1.Service, taken map[netip.Addr]bool, dryRun bool) error {
	consistent := a.ips == nil || asksForIP(svc)
	ips, err := a.used(ctx, svc, taken, consistent)
	if err != nil {
		return err
	}
	err = a.ranges.allocateIP(svc, ips, dryRun)
	if apierrors.IsInternalError(err) && !consistent {
		// Full, as the watch cache has it: it may still hold Services
		// just deleted.
		if ips, err = a.used(ctx, svc, taken, true); err != nil {
			return err
		}
		err = a.ranges.allocateIP(svc, ips, dryRun)
	}
	return err
}

// invalid is upstream's answer to an allocation it refuses.
func invalid(svc *corev1.Service, errs ...*field.Error) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
}

// ipRefused is upstream's Invalid error for an address asked for that
// cannot be had (its path and value are all of spec.clusterIPs).
func ipRefused(svc *corev1.Service, ip, why string) error {
	return invalid(svc, field.Invalid(field.NewPath("spec", "clusterIPs"), clusterIPs(svc, ip), fmt.Sprintf("failed to allocate IP %s: %s", ip, why)))
}

// clusterIPs is svc's spec.clusterIPs as upstream's errors show it:
// filled in from spec.clusterIP (ip) if the client sent that alone.
func clusterIPs(svc *corev1.Service, ip string) []string {
	if len(svc.Spec.ClusterIPs) == 0 {
		return []string{ip}
	}
	return svc.Spec.ClusterIPs
}

func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

func needsNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeLoadBalancer && (svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts))
}

// allocateIP gives svc a free usable address of the range unless it asks
// for one, which it checks (the range's first address in a dry run).
func (r Ranges) allocateIP(svc *corev1.Service, used map[netip.Addr]bool, dryRun bool) error {
	ip := svc.Spec.ClusterIP
	if ip == "" && len(svc.Spec.ClusterIPs) > 0 {
		ip = svc.Spec.ClusterIPs[0]
	}
	switch ip {
	case corev1.ClusterIPNone:
	case "":
		if dryRun {
			ip = r.ClusterIPs.Addr().String()
			break
		}
		addr, ok := r.freeIP(used)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: range is full", svc.Name))
		}
		ip = addr.String()
	default:
		addr, err := netip.ParseAddr(ip)
		inRange := err == nil && (r.usable(addr) || addr == r.KubernetesServiceIP())
		switch {
		case err != nil:
			return invalid(svc, field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
		case addr.Is6():
			return invalid(svc, field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), clusterIPs(svc, ip), "IPv6 is not configured on this cluster"))
		case !inRange && dryRun:
			return ipRefused(svc, ip, fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ip, r.ClusterIPs))
		case !inRange:
			return ipRefused(svc, ip, "the provided network does not match the current range")
		case used[addr] && !dryRun:
			return ipRefused(svc, ip, "provided IP is already allocated")
		}
	}
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip} // initFamilies set the families
	return nil
}

// allocateNodePorts gives every port without a node port one (ports with
// the same number, 53/TCP and 53/UDP, share one, as upstream's do), and a
// health check node port to a LoadBalancer whose traffic stays local.
func (r Ranges) allocateNodePorts(svc *corev1.Service, used map[int32]bool, dryRun bool) error {
	byPort := map[int32]int32{} // port -> its node port in this service
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			byPort[p.Port] = p.NodePort
		}
	}
	// last is the highest node port handed out yet: a dry run counts on
	// from it, or from 32768 if none, whatever the range (upstream's
	// PortAllocationOperation).
	var last int32
	claimedBy := map[int32]int32{} // node port -> the port number that asked for it first
	ports := svc.Spec.Ports
	if !needsNodePorts(svc) {
		ports = nil // a LoadBalancer without node ports may need a health check port
	}
	for i := range ports {
		p := &svc.Spec.Ports[i]
		path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
		if p.NodePort == 0 {
			if shared, ok := byPort[p.Port]; ok {
				p.NodePort = shared
				continue
			}
			port, ok := r.freeNodePort(used)
			if dryRun {
				port, ok = cmp.Or(last, 32768)+1, true
			}
			if !ok {
				return apierrors.NewInternalError(errors.New("failed to allocate a nodePort: range is full"))
			}
			p.NodePort, byPort[p.Port], used[port], last = port, port, true, max(last, port)
			continue
		}
		if by, ok := claimedBy[p.NodePort]; ok {
			if by != p.Port {
				return invalid(svc, field.Invalid(path, p.NodePort, "provided port is already allocated"))
			}
			continue
		}
		claimedBy[p.NodePort], last = p.Port, max(last, p.NodePort)
		switch {
		case !r.NodePorts.Contains(p.NodePort) && !dryRun:
			return invalid(svc, field.Invalid(path, p.NodePort, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", r.NodePorts)))
		case used[p.NodePort]:
			return invalid(svc, field.Invalid(path, p.NodePort, "provided port is already allocated"))
		}
		used[p.NodePort] = true // not handed out to a later port of svc
	}
	if !needsHealthCheck(svc) {
		return nil
	}
	// Upstream's errors here are 500s.
	switch port := svc.Spec.HealthCheckNodePort; {
	case port == 0:
		port, ok := r.freeNodePort(used)
		if dryRun {
			port, ok = cmp.Or(last, 32768)+1, true
		}
		if !ok {
			return apierrors.NewInternalError(errors.New("failed to allocate a HealthCheck NodePort 0: range is full"))
		}
		svc.Spec.HealthCheckNodePort, used[port] = port, true
	case !r.NodePorts.Contains(port) && !dryRun:
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: provided port is not in the valid range. The range of valid ports is %s", port, r.NodePorts))
	case used[port]:
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: provided port is already allocated", port))
	default:
		used[port] = true
	}
	return nil
}
