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
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/dryrun"

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
	base.ValidateName = apimachineryvalidation.NameIsDNS1035Label
	base.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.Service), nil) }
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
		return append(validate(svc, oldSvc), validateUpdate(svc, oldSvc)...)
	}
	base.Warnings = warnings
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
		if err := clusterIPsInStep(obj.(*corev1.Service)); err != nil {
			return nil, err
		}
		return allocate(ctx, obj.(*corev1.Service), nil, options.DryRun)
	}
	store.BeginUpdate = func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (genericregistry.FinishFunc, error) {
		svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
		keepAllocated(svc, oldSvc)
		if err := clusterIPsInStep(svc); err != nil {
			return nil, err
		}
		finish := func(context.Context, bool) {}
		if needsClusterIP(svc) && !needsClusterIP(oldSvc) || needsNodePorts(svc) && gainsNodePorts(svc, oldSvc) {
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

// gainsNodePorts reports whether svc lacks a node port, or holds one old
// did not.
func gainsNodePorts(svc, old *corev1.Service) bool {
	_, had := holds(old)
	for _, p := range svc.Spec.Ports {
		if p.NodePort == 0 || !slices.Contains(had, p.NodePort) {
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

// clusterIPsInStep refuses, as upstream's allocator does before anything
// is allocated (ValidateServiceClusterIPsRelatedFields), clusterIPs that
// disagree with clusterIP: its first value must be clusterIP, and it is
// empty when clusterIP is. (A create or update that sets clusterIP alone
// has clusterIPs made to follow it before.)
func clusterIPsInStep(svc *corev1.Service) error {
	if !needsClusterIP(svc) || len(svc.Spec.ClusterIPs) == 0 {
		return nil
	}
	path := specPath.Child("clusterIPs")
	switch {
	case svc.Spec.ClusterIP == "":
		return invalid(svc, field.Invalid(path, svc.Spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	case svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP:
		return invalid(svc, field.Invalid(path, svc.Spec.ClusterIPs, "first value must match `clusterIP`"))
	}
	return nil
}

var specPath = field.NewPath("spec")

var serviceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}

// validate is the cheap part of upstream's ValidateService; old is the
// Service an update replaces, or nil.
func validate(svc, old *corev1.Service) field.ErrorList {
	errs := validateExternalIPs(svc, old)
	switch svc.Spec.Type {
	case corev1.ServiceTypeExternalName:
		if len(svc.Spec.ClusterIPs) > 0 || svc.Spec.ClusterIP != "" {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		// A CNAME, fully qualified or not.
		if cname := strings.TrimSuffix(svc.Spec.ExternalName, "."); cname == "" {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(cname) {
				errs = append(errs, field.Invalid(specPath.Child("externalName"), cname, msg))
			}
		}
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP != corev1.ClusterIPNone {
			errs = append(errs, field.Required(specPath.Child("ports"), ""))
		}
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), svc.Spec.Type, serviceTypes))
	}
	names := sets.New[string]()
	type portKey struct {
		port     int32
		protocol corev1.Protocol
	}
	ports := sets.New[portKey]()
	for i, p := range svc.Spec.Ports {
		path := specPath.Child("ports").Index(i)
		if key := (portKey{p.Port, p.Protocol}); ports.Has(key) {
			errs = append(errs, field.Duplicate(path, p))
		} else {
			ports.Insert(key)
		}
		switch {
		case len(svc.Spec.Ports) > 1 && p.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		case p.Name != "" && names.Has(p.Name):
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		case p.Name != "":
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
			}
		}
		names.Insert(p.Name)
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
		}
		switch p.Protocol {
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, field.NotSupported(path.Child("protocol"), p.Protocol, []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}))
		}
		errs = append(errs, validateTargetPort(p.TargetPort, path.Child("targetPort"))...)
		if p.NodePort != 0 && svc.Spec.Type == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Forbidden(path.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
	}
	errs = append(errs, validateSourceRanges(svc, old)...)
	return append(errs, metav1validation.ValidateLabels(svc.Spec.Selector, specPath.Child("selector"))...)
}

func validateTargetPort(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	if port.Type == intstr.String {
		msgs = validation.IsValidPortName(port.StrVal)
	} else {
		msgs = validation.IsValidPortNum(port.IntValue())
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, port, msg))
	}
	return errs
}

// validateUpdate keeps a service's cluster IP unless it turns into or out
// of an ExternalName service.
func validateUpdate(svc, old *corev1.Service) field.ErrorList {
	if !needsClusterIP(svc) || !needsClusterIP(old) || len(old.Spec.ClusterIPs) == 0 {
		return nil
	}
	if len(svc.Spec.ClusterIPs) == 0 || svc.Spec.ClusterIPs[0] != old.Spec.ClusterIPs[0] {
		return field.ErrorList{field.Invalid(specPath.Child("clusterIPs").Index(0), svc.Spec.ClusterIPs, "may not change once set")}
	}
	return nil
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
