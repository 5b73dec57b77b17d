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
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// ipLeakGrace is how old an IPAddress of no Service must be before a
// repair deletes it, as upstream's (kube-apiserver's request timeout): a
// Service's IPAddress is created before the Service is stored.
const ipLeakGrace = 60 * time.Second

// ipWriteGrace is how long a repair leaves an IPAddress made after the
// Service it names, which does not hold it: a create that failed may be
// about to delete it (upstream's 5 s).
const ipWriteGrace = 5 * time.Second

// RepairClusterIPs makes the IPAddresses true to the stored Services at
// time now, as upstream's RepairIPAddress controller (k8s.io/kubernetes
// pkg/registry/core/service/ipallocator/controller/repairip.go): a cluster
// IP a Service holds without its IPAddress gets one; an IPAddress of the
// allocator's that no Service holds is deleted, once older than
// ipLeakGrace (ipWriteGrace if its Service is older than it), unless a
// write of this server's holds its address. Each repair is logged with
// upstream's message.
func (s *Storage) RepairClusterIPs(ctx context.Context, now time.Time) error {
	a := s.allocator
	if a.ips == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// The IPAddresses before the Services: the IPAddress of a Service
	// stored in between is created before it, so is listed.
	list, err := a.ips.List(genericapirequest.WithNamespace(ctx, ""), listOptions(true))
	if err != nil {
		return err
	}
	stored, err := a.list(ctx, true)
	if err != nil {
		return err
	}
	ips := map[string]*networkingv1.IPAddress{}
	for i := range list.(*networkingv1.IPAddressList).Items {
		ip := &list.(*networkingv1.IPAddressList).Items[i]
		ips[ip.Name] = ip
	}
	services := map[types.NamespacedName]*corev1.Service{}
	for i := range stored {
		services[types.NamespacedName{Namespace: stored[i].Namespace, Name: stored[i].Name}] = &stored[i]
	}
	var errs []error
	for _, svc := range services {
		errs = append(errs, a.repairServiceIPs(ctx, svc, ips, services))
	}
	for _, ip := range ips {
		errs = append(errs, a.repairIPAddress(ctx, ip, services, now))
	}
	return utilerrors.NewAggregate(errs)
}

// repairServiceIPs records the cluster IPs svc holds that have no
// IPAddress, or one that names no Service holding it.
func (a *allocator) repairServiceIPs(ctx context.Context, svc *corev1.Service, ips map[string]*networkingv1.IPAddress, services map[types.NamespacedName]*corev1.Service) error {
	held, _ := holds(svc)
	for _, addr := range held {
		name := addr.String()
		if !a.ranges.ClusterIPs.Contains(addr) {
			utilruntime.HandleErrorWithContext(ctx, nil, fmt.Sprintf("the ClusterIP [IPv4]: %s for Service %s/%s is not within any service CIDR; please recreate", name, svc.Namespace, svc.Name))
			continue
		}
		ip, ok := ips[name]
		switch {
		case !ok:
			utilruntime.HandleErrorWithContext(ctx, nil, fmt.Sprintf("the ClusterIP [IPv4]: %s for Service %s/%s is not allocated; repairing", name, svc.Namespace, svc.Name))
		case ip.Spec.ParentRef == nil || ip.Spec.ParentRef.Group != "" || ip.Spec.ParentRef.Resource != "services":
		case ip.Spec.ParentRef.Namespace == svc.Namespace && ip.Spec.ParentRef.Name == svc.Name:
			if managedByAllocator(ip) && ip.Labels[networkingv1.LabelIPAddressFamily] == string(corev1.IPv4Protocol) {
				continue
			}
		default:
			if other, ok := services[types.NamespacedName{Namespace: ip.Spec.ParentRef.Namespace, Name: ip.Spec.ParentRef.Name}]; ok && holdsIP(other, name) {
				utilruntime.HandleErrorWithContext(ctx, nil, fmt.Sprintf("the cluster IP [IPv4]:%s for service %s/%s was assigned to other services %s/%s; please recreate",
					name, svc.Namespace, svc.Name, other.Namespace, other.Name))
				continue
			}
		}
		if ok { // recreated, naming svc
			if err := a.deleteIPAddress(ctx, ip); err != nil {
				return err
			}
		}
		record := ipAddressOf(svc)
		record.Name = name
		created, err := a.ips.Create(genericapirequest.WithNamespace(ctx, ""), record, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		switch {
		case err == nil:
			ips[name] = created.(*networkingv1.IPAddress)
		case apierrors.IsAlreadyExists(err): // made since listed: the next repair sees
			delete(ips, name)
		default:
			return err
		}
	}
	return nil
}

// repairIPAddress deletes ip if the allocator made it and no Service
// holds it, past the graces.
func (a *allocator) repairIPAddress(ctx context.Context, ip *networkingv1.IPAddress, services map[types.NamespacedName]*corev1.Service, now time.Time) error {
	if !managedByAllocator(ip) {
		return nil
	}
	if addr, err := netip.ParseAddr(ip.Name); err == nil && a.pendingIPs[addr] > 0 {
		return nil
	}
	ref, age := ip.Spec.ParentRef, now.Sub(ip.CreationTimestamp.Time)
	switch {
	case ref == nil || ref.Group != "" || ref.Resource != "services":
		utilruntime.HandleErrorWithContext(ctx, nil, fmt.Sprintf("IPAddress %s appears to have been modified, not referencing a Service %v: cleaning up", ip.Name, ref))
		return a.deleteIPAddress(ctx, ip)
	}
	svc, ok := services[types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}]
	switch {
	case !ok && age <= ipLeakGrace:
		return nil
	case !ok:
		utilruntime.HandleErrorWithContext(ctx, nil, fmt.Sprintf("IPAddress %s appears to have leaked: cleaning up", ip.Name))
		return a.deleteIPAddress(ctx, ip)
	case holdsIP(svc, ip.Name):
		return nil
	case svc.Spec.Type == corev1.ServiceTypeExternalName && age < ipLeakGrace,
		ip.CreationTimestamp.After(svc.CreationTimestamp.Time) && age < ipWriteGrace:
		return nil
	}
	utilruntime.HandleErrorWithContext(ctx, nil, fmt.Sprintf("the IPAddress: %s for Service %s/%s has a wrong reference %#v; cleaning up", ip.Name, svc.Namespace, svc.Name, ref))
	return a.deleteIPAddress(ctx, ip)
}

// deleteIPAddress deletes ip, as it was listed.
func (a *allocator) deleteIPAddress(ctx context.Context, ip *networkingv1.IPAddress) error {
	_, _, err := a.ips.Delete(genericapirequest.WithNamespace(ctx, ""), ip.Name, rest.ValidateAllObjectFunc,
		&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ip.UID, ResourceVersion: &ip.ResourceVersion}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or changed since listed: the next repair sees
		return nil
	}
	return err
}

// managedByAllocator says whether the allocator, or upstream's repair,
// made ip (its managed-by label).
func managedByAllocator(ip *networkingv1.IPAddress) bool {
	by := ip.Labels[networkingv1.LabelManagedBy]
	return by == "ipallocator.k8s.io" || by == "ipallocator-repair-controller"
}

// holdsIP says whether svc holds the cluster IP ip.
func holdsIP(svc *corev1.Service, ip string) bool {
	held, _ := holds(svc)
	for _, addr := range held {
		if addr.String() == ip {
			return true
		}
	}
	return false
}
