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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// cleanupTimeout bounds the reads and deletes that end an allocation
// after its request has ended (or timed out).
const cleanupTimeout = 10 * time.Second

// Storage is the storage of services and services/status, and the
// allocator of their addresses.
type Storage struct {
	Services  *registry.REST
	Status    *registry.StatusREST
	allocator *allocator
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"services": s.Services, "services/status": s.Status}
}

// NewStorage returns the storage of services and services/status, whose
// addresses come from DefaultRanges (New records their cluster IPs as
// IPAddresses, and takes the ranges).
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter, nil, DefaultRanges))
}

// New returns the storage of services, whose addresses come from ranges
// (which it refuses unless valid), each cluster IP recorded as an
// IPAddress in ips if not nil, and the node ports handed out recorded in
// optsGetter's storage (see portRecord).
func New(optsGetter generic.RESTOptionsGetter, ips IPAddresses, ranges Ranges) (*Storage, error) {
	if err := ranges.Validate(); err != nil {
		return nil, fmt.Errorf("services: %w", err)
	}
	base := registry.NewStrategy(true)
	base.ValidateName = apimachineryvalidation.NameIsDNSLabel
	base.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.Service), nil) }
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*corev1.Service), old.(*corev1.Service))
	}
	base.Warnings = warnings
	base.OnUpdate = func(obj, _ runtime.Object) { // after the old status is kept
		if svc := obj.(*corev1.Service); svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
		}
	}
	main, status := registry.SpecAndStatus{GroupVersion: "v1"}.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateStatus(obj.(*corev1.Service), old.(*corev1.Service))
	}
	status.Warnings = statusWarnings
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("services"),
		Singular:   "service",
		ShortNames: []string{"svc"},
		Categories: []string{"all"},
		New:        func() runtime.Object { return &corev1.Service{} },
		NewList:    func() runtime.Object { return &corev1.ServiceList{} },
		Strategy:   main,
		Fields:     func(obj runtime.Object) fields.Set { return api.ServiceFields(obj.(*corev1.Service)) },
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	store.Decorator = dropExternalNameTrafficPolicy
	ports, destroy, err := newPortRecord(optsGetter, ranges.NodePorts)
	if err != nil {
		return nil, err
	}
	withDestroy(store.Store, destroy)
	a := &allocator{ranges: ranges, ips: ips, ports: ports, list: func(ctx context.Context, consistent bool) ([]corev1.Service, error) {
		list, err := store.List(genericapirequest.WithNamespace(ctx, metav1.NamespaceAll), listOptions(consistent))
		if err != nil {
			return nil, err
		}
		return list.(*corev1.ServiceList).Items, nil
	}}
	// stored reports whether svc, with its cluster IP and node ports, was
	// stored after all: a write that failed (timed out) may yet have been
	// committed. Unless a consistent read says otherwise, it was: better
	// an address recorded with no Service than a Service whose address is
	// free for another.
	stored := func(ctx context.Context, svc *corev1.Service) bool {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		got, err := store.Get(genericapirequest.WithNamespace(ctx, svc.Namespace), svc.Name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false
		}
		if err != nil {
			return true
		}
		s := got.(*corev1.Service)
		_, ports := holds(s)
		_, want := holds(svc)
		return s.UID == svc.UID && s.Spec.ClusterIP == svc.Spec.ClusterIP && slices.Equal(ports, want)
	}
	// allocate claims what svc needs (old: what it held before an update,
	// else nil); the returned func ends the claim: if the write failed
	// (and svc was not stored after all), it releases what it recorded.
	// A dry run records and holds nothing, as upstream's (allocate says
	// what it shows).
	allocate := func(ctx context.Context, svc, old *corev1.Service, dryRun []string) (genericregistry.FinishFunc, error) {
		release, unhold, err := a.claim(ctx, svc, old, dryrun.IsDryRun(dryRun))
		if err != nil {
			return nil, err
		}
		if dryrun.IsDryRun(dryRun) {
			return func(context.Context, bool) {}, nil
		}
		return func(ctx context.Context, success bool) {
			if !success && !stored(ctx, svc) {
				release()
			}
			unhold()
		}, nil
	}
	store.BeginCreate = func(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (genericregistry.FinishFunc, error) {
		svc := obj.(*corev1.Service)
		if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 { // an old client's
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		if err := initFamilies(svc, nil); err != nil {
			return nil, err
		}
		return allocate(ctx, svc, nil, options.DryRun)
	}
	store.BeginUpdate = func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
		svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
		keepAllocated(svc, oldSvc)
		if err := initFamilies(svc, oldSvc); err != nil {
			return nil, err
		}
		finish := func(context.Context, bool) {}
		if needsClusterIP(svc) && !needsClusterIP(oldSvc) || gainsNodePorts(svc, oldSvc) {
			f, err := allocate(ctx, svc, oldSvc, options.DryRun)
			if err != nil {
				return nil, err
			}
			finish = f
		}
		// The store calls finish before it writes the update: what the
		// Service gives up is released after (AfterUpdate). (The status
		// strategy may yet put back the ports it asked for.)
		_, asked := holds(svc)
		return func(ctx context.Context, success bool) {
			finish(ctx, success)
			if success && !dryrun.IsDryRun(options.DryRun) {
				a.updating(svc, oldSvc, asked)
			}
		}, nil
	}
	store.AfterUpdate = func(obj runtime.Object, options *metav1.UpdateOptions) {
		if !dryrun.IsDryRun(options.DryRun) {
			a.updated(obj.(*corev1.Service))
		}
	}
	// The generic store calls AfterDelete after a dry run too.
	store.AfterDelete = func(obj runtime.Object, options *metav1.DeleteOptions) {
		svc := obj.(*corev1.Service)
		if dryrun.IsDryRun(options.DryRun) {
			return
		}
		if needsClusterIP(svc) {
			a.release(context.Background(), svc, svc.Spec.ClusterIP)
		}
		_, ports := holds(svc)
		a.releasePorts(context.Background(), ports)
		a.updated(&corev1.Service{ObjectMeta: svc.ObjectMeta}) // and what an update that failed left
	}
	return &Storage{Services: store, Status: registry.NewStatusREST(store, status), allocator: a}, nil
}

// gainsNodePorts reports whether svc needs a node port (or a health
// check node port) it lacks, or holds one old did not.
func gainsNodePorts(svc, old *corev1.Service) bool {
	_, had := holds(old)
	var needs []int32
	if needsNodePorts(svc) {
		for _, p := range svc.Spec.Ports {
			needs = append(needs, p.NodePort)
		}
	}
	if needsHealthCheck(svc) {
		needs = append(needs, svc.Spec.HealthCheckNodePort)
	}
	for _, port := range needs {
		if port == 0 || !slices.Contains(had, port) {
			return true
		}
	}
	return false
}

// keepAllocated carries the cluster IP and node ports of old over to an
// update that leaves them out, as upstream's patchAllocatedValues and
// normalizeClusterIPs do, and drops those the new type does not use but
// old had (dropTypeDependentFields), so that changing the type is one patch.
func keepAllocated(svc, old *corev1.Service) {
	dropTypeDependent(svc, old)
	if needsHealthCheck(svc) && needsHealthCheck(old) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
	if !needsClusterIP(svc) && needsClusterIP(old) && svc.Spec.ClusterIP == old.Spec.ClusterIP {
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
	}
	if !needsNodePorts(svc) && needsNodePorts(old) {
		for i := range svc.Spec.Ports {
			for _, o := range old.Spec.Ports {
				if p := &svc.Spec.Ports[i]; p.NodePort == o.NodePort && p.Port == o.Port {
					p.NodePort = 0
				}
			}
		}
	}
	if needsClusterIP(svc) && needsClusterIP(old) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
		// A changed or cleared clusterIP with clusterIPs as they were
		// changes or clears clusterIPs too (upstream's
		// normalizeClusterIPs), and validateUpdate refuses the change.
		if svc.Spec.ClusterIP != old.Spec.ClusterIP && slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) && len(svc.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs[1:]...)
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = old.Spec.IPFamilies
		}
		if svc.Spec.IPFamilyPolicy == nil {
			svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		}
	}
	if !needsNodePorts(svc) || !needsNodePorts(old) {
		return
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		for _, o := range old.Spec.Ports {
			if p.NodePort == 0 && o.Port == p.Port && o.Protocol == p.Protocol {
				p.NodePort = o.NodePort
			}
		}
	}
}

// dropTypeDependent drops, as upstream's dropTypeDependentFields, what
// old's type used and svc's does not, if svc keeps it as old had it:
// the health check node port, allocateLoadBalancerNodePorts, the load
// balancer class and the external traffic policy. (keepAllocated drops
// the addresses and node ports; the strategy, the status of a load
// balancer no longer.)
func dropTypeDependent(svc, old *corev1.Service) {
	if needsHealthCheck(old) && !needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	lb := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && !lb {
		if a, b := svc.Spec.AllocateLoadBalancerNodePorts, old.Spec.AllocateLoadBalancerNodePorts; a != nil && b != nil && *a == *b {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if ptr.Equal(svc.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && svc.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
}

// dropExternalNameTrafficPolicy is upstream's defaultOnReadInternalTrafficPolicy:
// an ExternalName Service read (not watched) shows no internalTrafficPolicy,
// which defaulting gave it while it was of another type. It sets fields
// of the object read, never of what they point to.
func dropExternalNameTrafficPolicy(obj runtime.Object) {
	drop := func(svc *corev1.Service) {
		if svc.Spec.Type == corev1.ServiceTypeExternalName {
			svc.Spec.InternalTrafficPolicy = nil
		}
	}
	switch obj := obj.(type) {
	case *corev1.Service:
		drop(obj)
	case *corev1.ServiceList:
		for i := range obj.Items {
			drop(&obj.Items[i])
		}
	}
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Type", Type: "string", Description: "type determines how the Service is exposed."},
		{Name: "Cluster-IP", Type: "string", Description: "clusterIP is the IP address of the service."},
		{Name: "External-IP", Type: "string", Description: "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."},
		{Name: "Port(s)", Type: "string", Description: "The list of ports that are exposed by this service."},
		registry.AgeColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: "Route service traffic to pods with label keys and values matching this selector."},
	},
	Cells: func(obj runtime.Object) []any {
		svc := obj.(*corev1.Service)
		clusterIP := svc.Spec.ClusterIP
		if clusterIP == "" {
			clusterIP = "<none>"
		}
		return []any{svc.Name, string(svc.Spec.Type), clusterIP, externalIP(svc), ports(svc), registry.Age(svc.CreationTimestamp), labels.FormatLabels(svc.Spec.Selector)}
	},
}

func externalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	case corev1.ServiceTypeLoadBalancer:
		// The load balancer's addresses, sorted and once each, then spec.externalIPs.
		lb := sets.New[string]()
		for _, in := range svc.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				lb.Insert(in.IP)
			} else if in.Hostname != "" {
				lb.Insert(in.Hostname)
			}
		}
		ips := append(sets.List(lb), svc.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	}
	if len(svc.Spec.ExternalIPs) > 0 {
		return strings.Join(svc.Spec.ExternalIPs, ",")
	}
	return "<none>"
}

func ports(svc *corev1.Service) string {
	if len(svc.Spec.Ports) == 0 {
		return "<none>"
	}
	var out []string
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out = append(out, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol))
		} else {
			out = append(out, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
		}
	}
	return strings.Join(out, ",")
}
