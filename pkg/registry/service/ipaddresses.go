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
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// As kube-apiserver 1.37 does, each cluster IP is recorded as an
// networking.k8s.io/v1 IPAddress named by the address, whose parentRef is
// its Service. An IPAddress is created before its Service is stored: etcd
// creates it only if it is absent, so no two Services get one address,
// whichever server (of several on one etcd) allocates it.

// IPAddresses is the storage of IPAddresses.
type IPAddresses interface {
	rest.Creater
	rest.GracefulDeleter
	rest.Lister
}

// recordedIPs returns the addresses ips records, all of them taken; as
// the watch cache has them unless consistent.
func (a *allocator) recordedIPs(ctx context.Context, consistent bool) (map[netip.Addr]bool, error) {
	taken := map[netip.Addr]bool{}
	if a.ips == nil {
		return taken, nil
	}
	list, err := a.ips.List(genericapirequest.WithNamespace(ctx, ""), listOptions(consistent))
	if err != nil {
		return nil, err
	}
	for _, ip := range list.(*networkingv1.IPAddressList).Items {
		if addr, err := netip.ParseAddr(ip.Name); err == nil {
			taken[addr] = true
		}
	}
	return taken, nil
}

// claim allocates what svc needs (allocate, under mu: old is what it
// held before an update, else nil) and holds it pending, then records a
// new cluster IP as an IPAddress, outside mu. If another server recorded
// the address first: a requested address is an Invalid error; an
// allocated one is given up, and svc is allocated again with it taken. A
// dry run holds and records nothing. The returned funcs release what the
// claim recorded (release) and end the hold (unhold).
func (a *allocator) claim(ctx context.Context, svc, old *corev1.Service, dryRun bool) (release, unhold func(), err error) {
	requested := asksForIP(svc)
	newIP := needsClusterIP(svc) && (old == nil || !needsClusterIP(old))
	asked, taken := svc.Spec.DeepCopy(), map[netip.Addr]bool{}
	for {
		a.mu.Lock()
		ports, err := a.allocate(ctx, svc, old, taken, dryRun)
		unholdLocked := func() {}
		if err == nil && !dryRun {
			unholdLocked = a.hold(svc)
		}
		a.mu.Unlock()
		if err != nil || dryRun {
			return func() {}, func() {}, err
		}
		unhold = func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			unholdLocked()
		}
		releasePorts := func() { a.releasePorts(ctx, ports) }
		ip := svc.Spec.ClusterIP
		if a.ips == nil || !newIP || ip == corev1.ClusterIPNone || ip == "" {
			return releasePorts, unhold, nil
		}
		_, err = a.ips.Create(genericapirequest.WithNamespace(ctx, ""), ipAddressOf(svc), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err == nil {
			return func() { a.release(ctx, svc, ip); releasePorts() }, unhold, nil
		}
		releasePorts()
		unhold()
		switch {
		case !apierrors.IsAlreadyExists(err):
			return nil, nil, err
		case requested:
			return nil, nil, ipRefused(svc, ip, "provided IP is already allocated")
		}
		// Another server took it since we listed: allocate again.
		taken[netip.MustParseAddr(ip)] = true
		svc.Spec = *asked.DeepCopy()
	}
}

// release deletes the IPAddress of ip if it is svc's.
func (a *allocator) release(ctx context.Context, svc *corev1.Service, ip string) {
	if a.ips == nil || ip == "" || ip == corev1.ClusterIPNone {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, _, _ = a.ips.Delete(genericapirequest.WithNamespace(ctx, ""), ip, func(_ context.Context, obj runtime.Object) error {
		ref := obj.(*networkingv1.IPAddress).Spec.ParentRef
		if ref == nil || ref.Resource != "services" || ref.Namespace != svc.Namespace || ref.Name != svc.Name {
			return apierrors.NewConflict(networkingv1.Resource("ipaddresses"), ip, fmt.Errorf("held by another parent"))
		}
		return nil
	}, &metav1.DeleteOptions{})
}

// ipAddressOf is the IPAddress that records svc's cluster IP, as
// upstream's allocator labels it.
func ipAddressOf(svc *corev1.Service) *networkingv1.IPAddress {
	return &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Spec.ClusterIP,
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(corev1.IPv4Protocol),
				networkingv1.LabelManagedBy:       "ipallocator.k8s.io",
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "", Resource: "services", Namespace: svc.Namespace, Name: svc.Name}},
	}
}
