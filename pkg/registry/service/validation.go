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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpoints"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// This file is k8s.io/kubernetes 1.37's ValidateService and
// ValidateServiceUpdate (pkg/apis/core/validation), ported to the v1
// types, in upstream's order and words; its feature gates are all on in
// 1.37 (RelaxedServiceNameValidation, PreferSameTrafficDistribution).

var specPath = field.NewPath("spec")

var (
	serviceTypes           = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}
	sessionAffinities      = []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone}
	protocols              = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}
	externalPolicies       = []corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal}
	internalPolicies       = []corev1.ServiceInternalTrafficPolicy{corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal}
	trafficDistributions   = []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
	ipFamilies             = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	ipFamilyPolicies       = []corev1.IPFamilyPolicy{corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack, corev1.IPFamilyPolicySingleStack}
	maxAffinityTimeout     = int32(86400) // upstream's core.MaxClientIPServiceAffinitySeconds
	sourceRangesAnnotation = corev1.AnnotationLoadBalancerSourceRangesKey
)

// validateUpdate is what ValidateServiceUpdate checks besides the metadata
// (k8s.io/apiserver's to check): addresses and families neither changed
// nor released but as dual-stack allows, the load balancer class and the
// health check node port kept, then the service as validate checks it.
func validateUpdate(svc, old *corev1.Service) field.ErrorList {
	errs := validateUpgradeDowngradeClusterIPs(old, svc)
	errs = append(errs, validateUpgradeDowngradeIPFamilies(old, svc)...)
	errs = append(errs, validateLoadBalancerClass(old, svc)...)
	if needsHealthCheck(old) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(specPath.Child("healthCheckNodePort"), "field is immutable"))
	}
	return append(errs, validate(svc, old)...)
}

// validate is upstream's validateService: old is the Service an update
// replaces, or nil.
func validate(svc, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	mode, modeSet := svc.Annotations[corev1.AnnotationTopologyMode]
	if hints, hintsSet := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; modeSet && hintsSet && mode != hints {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(corev1.AnnotationTopologyMode), mode,
			fmt.Sprintf("must match annotations[%s] when both are specified", corev1.DeprecatedAnnotationTopologyAwareHints)))
	}
	headless := isHeadless(svc)
	if len(svc.Spec.Ports) == 0 && !headless && svc.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if headless {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), svc.Spec.ClusterIPs[0], fmt.Sprintf("may not be set to 'None' for %s services", svc.Spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		errs = append(errs, validateExternalName(svc)...)
	}
	names := sets.New[string]()
	for i := range svc.Spec.Ports {
		errs = append(errs, validatePort(&svc.Spec.Ports[i], len(svc.Spec.Ports) > 1, names, specPath.Child("ports").Index(i))...)
	}
	if svc.Spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(svc.Spec.Selector, specPath.Child("selector"))...)
	}
	errs = append(errs, validateSessionAffinity(svc)...)
	errs = append(errs, validateClusterIPs(svc, old)...)
	errs = append(errs, validateExternalIPs(svc, old)...)
	switch {
	case svc.Spec.Type == "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	case !slices.Contains(serviceTypes, svc.Spec.Type):
		errs = append(errs, field.NotSupported(specPath.Child("type"), svc.Spec.Type, serviceTypes))
	}
	errs = append(errs, validatePortsTogether(svc)...)
	errs = append(errs, validateSourceRanges(svc, old)...)
	if svc.Spec.AllocateLoadBalancerNodePorts != nil && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), "")) // sic: upstream's path
	}
	errs = append(errs, validateLoadBalancerClass(nil, svc)...)
	return append(errs, validateTrafficPolicies(svc)...)
}

// validateExternalName checks an ExternalName service: no addresses or
// families, and a DNS name (its trailing dot allowed).
func validateExternalName(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	if len(svc.Spec.ClusterIPs) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
	}
	if len(svc.Spec.IPFamilies) > 0 {
		errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
	}
	if svc.Spec.IPFamilyPolicy != nil {
		errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
	}
	cname := strings.TrimSuffix(svc.Spec.ExternalName, ".")
	if cname == "" {
		return append(errs, field.Required(specPath.Child("externalName"), ""))
	}
	for _, msg := range validation.IsDNS1123Subdomain(cname) {
		errs = append(errs, field.Invalid(specPath.Child("externalName"), cname, msg))
	}
	return errs
}

// validatePort is upstream's validateServicePort; names holds the port
// names seen before.
func validatePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		for _, msg := range validation.IsDNS1123Label(sp.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), sp.Name, msg))
		}
		if names.Has(sp.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
		} else {
			names.Insert(sp.Name)
		}
	}
	for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), sp.Port, msg))
	}
	if sp.Protocol == "" {
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	} else if !slices.Contains(protocols, sp.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), sp.Protocol, protocols))
	}
	errs = append(errs, pod.ValidatePortNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, qualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}

// validatePortsTogether checks the ports against each other and the
// type: no node port on a ClusterIP service, no node port twice for one
// protocol, no port twice for one protocol.
func validatePortsTogether(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	portsPath := specPath.Child("ports")
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		for i, port := range svc.Spec.Ports {
			if port.NodePort != 0 {
				errs = append(errs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	type key struct {
		protocol corev1.Protocol
		port     int32
	}
	nodePorts := sets.New[key]()
	for i, port := range svc.Spec.Ports {
		if port.NodePort == 0 {
			continue
		}
		k := key{port.Protocol, port.NodePort}
		if nodePorts.Has(k) {
			errs = append(errs, field.Duplicate(portsPath.Index(i).Child("nodePort"), port.NodePort))
		}
		nodePorts.Insert(k)
	}
	ports := sets.New[key]()
	for i, port := range svc.Spec.Ports {
		k := key{port.Protocol, port.Port}
		if ports.Has(k) {
			// Upstream's value is a ServicePort holding only the two.
			errs = append(errs, field.Duplicate(portsPath.Index(i), registry.Internal(corev1.ServicePort{Protocol: port.Protocol, Port: port.Port})))
		}
		ports.Insert(k)
	}
	return errs
}

// validateSessionAffinity checks the affinity and its config.
func validateSessionAffinity(svc *corev1.Service) field.ErrorList {
	p := specPath.Child("sessionAffinityConfig")
	switch svc.Spec.SessionAffinity {
	case "":
		return field.ErrorList{field.Required(specPath.Child("sessionAffinity"), "")}
	case corev1.ServiceAffinityNone:
		if svc.Spec.SessionAffinityConfig != nil {
			return field.ErrorList{field.Forbidden(p, fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone))}
		}
		return nil
	case corev1.ServiceAffinityClientIP:
	default:
		return field.ErrorList{field.NotSupported(specPath.Child("sessionAffinity"), svc.Spec.SessionAffinity, sessionAffinities)}
	}
	when := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	config := svc.Spec.SessionAffinityConfig
	switch {
	case config == nil:
		return field.ErrorList{field.Required(p, when)}
	case config.ClientIP == nil:
		return field.ErrorList{field.Required(p.Child("clientIP"), when)}
	case config.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(p.Child("clientIP", "timeoutSeconds"), when)}
	case *config.ClientIP.TimeoutSeconds <= 0 || *config.ClientIP.TimeoutSeconds > maxAffinityTimeout:
		return field.ErrorList{field.Invalid(p.Child("clientIP", "timeoutSeconds"), *config.ClientIP.TimeoutSeconds, fmt.Sprintf("must be greater than 0 and less than %d", maxAffinityTimeout))}
	}
	return nil
}

// validateExternalIPs checks the external IPs (an update may keep the IPs
// old had, which older rules allowed).
func validateExternalIPs(svc, old *corev1.Service) field.ErrorList {
	var existing []string
	if old != nil {
		existing = old.Spec.ExternalIPs
	}
	var errs field.ErrorList
	for i, ip := range svc.Spec.ExternalIPs {
		p := specPath.Child("externalIPs").Index(i)
		if ipErrs := validation.IsValidIPForLegacyField(p, ip, true, existing); len(ipErrs) > 0 {
			errs = append(errs, ipErrs...)
		} else {
			errs = append(errs, endpoints.ValidateEndpointIP(ip, p)...)
		}
	}
	return errs
}

// validateSourceRanges checks loadBalancerSourceRanges (the field's path
// in upstream's words, capitalised), or else the annotation it replaced:
// only for a LoadBalancer, CIDRs (space-padded, as history allows), the
// ones old had kept as they are.
func validateSourceRanges(svc, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
		p := specPath.Child("LoadBalancerSourceRanges")
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		var existing []string
		if old != nil {
			for _, value := range old.Spec.LoadBalancerSourceRanges {
				existing = append(existing, strings.TrimSpace(value))
			}
		}
		for i, value := range svc.Spec.LoadBalancerSourceRanges {
			errs = append(errs, validation.IsValidCIDRForLegacyField(p.Index(i), strings.TrimSpace(value), true, existing)...)
		}
		return errs
	}
	value, set := svc.Annotations[sourceRangesAnnotation]
	if !set {
		return nil
	}
	p := field.NewPath("metadata", "annotations").Key(sourceRangesAnnotation)
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
	}
	if old != nil && old.Annotations[sourceRangesAnnotation] == value {
		return errs
	}
	if value = strings.TrimSpace(value); value == "" {
		return errs
	}
	for _, cidr := range strings.Split(value, ",") {
		errs = append(errs, validation.IsValidCIDRForLegacyField(p, strings.TrimSpace(cidr), true, nil)...)
	}
	return errs
}

// validateLoadBalancerClass checks the class: a qualified name, only for
// a LoadBalancer, kept by an update (old, else nil) of one.
func validateLoadBalancerClass(old, svc *corev1.Service) field.ErrorList {
	p := specPath.Child("loadBalancerClass")
	var errs field.ErrorList
	lb := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if old != nil && lb && old.Spec.Type == corev1.ServiceTypeLoadBalancer && !ptr.Equal(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(p, svc.Spec.LoadBalancerClass, "may not change once set"))
	}
	switch {
	case svc.Spec.LoadBalancerClass == nil:
	case lb:
		errs = append(errs, qualifiedName(*svc.Spec.LoadBalancerClass, p)...)
	default:
		errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
	}
	return errs
}

// validateTrafficPolicies checks the external and internal traffic
// policies, the health check node port and the traffic distribution.
func validateTrafficPolicies(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	external := specPath.Child("externalTrafficPolicy")
	switch {
	case !externallyAccessible(svc):
		if svc.Spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(external, svc.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	case svc.Spec.ExternalTrafficPolicy == "":
		errs = append(errs, field.Required(external, ""))
	case !slices.Contains(externalPolicies, svc.Spec.ExternalTrafficPolicy):
		errs = append(errs, field.NotSupported(external, svc.Spec.ExternalTrafficPolicy, externalPolicies))
	}
	hc := specPath.Child("healthCheckNodePort")
	switch port := svc.Spec.HealthCheckNodePort; {
	case !needsHealthCheck(svc):
		if port != 0 {
			errs = append(errs, field.Invalid(hc, port, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	case port == 0:
		errs = append(errs, field.Required(hc, ""))
	default:
		for _, msg := range validation.IsValidPortNum(int(port)) {
			errs = append(errs, field.Invalid(hc, port, msg))
		}
	}
	internal := specPath.Child("internalTrafficPolicy")
	switch policy := svc.Spec.InternalTrafficPolicy; {
	case policy == nil:
		// Other types are not checked: stored objects would fail.
		if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Required(internal, ""))
		}
	case !slices.Contains(internalPolicies, *policy):
		errs = append(errs, field.NotSupported(internal, *policy, internalPolicies))
	}
	if d := svc.Spec.TrafficDistribution; d != nil && !slices.Contains(trafficDistributions, *d) {
		errs = append(errs, field.NotSupported(specPath.Child("trafficDistribution"), *d, trafficDistributions))
	}
	return errs
}

// externallyAccessible reports whether svc is reached from outside the
// cluster (upstream's ExternallyAccessible).
func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeNodePort ||
		svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0
}

// needsHealthCheck reports whether svc has a health check node port: a
// LoadBalancer whose external traffic stays local.
func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func isHeadless(svc *corev1.Service) bool {
	return len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// qualifiedName is upstream's ValidateQualifiedName.
func qualifiedName(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

// familyOf is ip's family ("" for no IP).
func familyOf(ip string) corev1.IPFamily {
	switch {
	case netutils.IsIPv4String(ip):
		return corev1.IPv4Protocol
	case netutils.IsIPv6String(ip):
		return corev1.IPv6Protocol
	}
	return ""
}
