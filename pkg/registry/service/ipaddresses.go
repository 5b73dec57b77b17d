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
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
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

// NewStorageRecordingIPs returns NewStorage's storage with each cluster
// IP recorded as an IPAddress in ips.
func NewStorageRecordingIPs(ips IPAddresses) func(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return func(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		return newStorage(optsGetter, ips)
	}
}

// recordedIPs returns the addresses ips records, all of them taken.
func (a *allocator) recordedIPs(ctx context.Context) (map[netip.Addr]bool, error) {
	taken := map[netip.Addr]bool{}
	if a.ips == nil {
		return taken, nil
	}
	list, err := a.ips.List(genericapirequest.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
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

// record creates the IPAddress of svc's cluster IP. If another holds the
// address: a requested address is an Invalid error; an allocated one is
// replaced by another free one (allocate runs again with it taken). The
// returned func deletes what record created.
func (a *allocator) record(ctx context.Context, svc *corev1.Service, requested bool) (release func(), err error) {
	release = func() {}
	if a.ips == nil || !needsClusterIP(svc) || svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		return release, nil
	}
	for {
		ip := svc.Spec.ClusterIP
		_, err := a.ips.Create(genericapirequest.WithNamespace(ctx, ""), ipAddressOf(svc), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		switch {
		case err == nil:
			return func() { a.release(context.WithoutCancel(ctx), svc, ip) }, nil
		case !apierrors.IsAlreadyExists(err):
			return release, err
		case requested:
			path := field.NewPath("spec", "clusterIPs").Index(0)
			return release, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name,
				field.ErrorList{field.Invalid(path, ip, fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", ip))})
		}
		// Another server took it since we listed: pick again.
		a.taken[netip.MustParseAddr(ip)] = true
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		if err := a.allocate(ctx, svc); err != nil {
			return release, err
		}
	}
}

// release deletes the IPAddress of ip if it is svc's.
func (a *allocator) release(ctx context.Context, svc *corev1.Service, ip string) {
	if a.ips == nil || ip == "" || ip == corev1.ClusterIPNone {
		return
	}
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
