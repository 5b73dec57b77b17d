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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// warnings are kube-apiserver's of a Service's create and update
// (upstream's GetWarningsForService).
func warnings(obj, _ runtime.Object) []string {
	svc := obj.(*corev1.Service)
	var warnings []string
	warn := func(w ...string) { warnings = append(warnings, w...) }
	if _, ok := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		warn(fmt.Sprintf("annotation %s is deprecated, please use %s instead", corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode))
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != "" {
		for i, ip := range svc.Spec.ClusterIPs {
			warn(validation.GetWarningsForIP(specPath.Child("clusterIPs").Index(i), ip)...)
		}
	}
	headless := svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP == corev1.ClusterIPNone
	if headless {
		if svc.Spec.LoadBalancerIP != "" {
			warn("spec.loadBalancerIP is ignored for headless services")
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			warn("spec.externalIPs is ignored for headless services")
		}
		if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
			warn("spec.SessionAffinity is ignored for headless services")
		}
	}
	for i, ip := range svc.Spec.ExternalIPs {
		warn(validation.GetWarningsForIP(specPath.Child("externalIPs").Index(i), ip)...)
	}
	if len(svc.Spec.ExternalIPs) > 0 && !headless && svc.Spec.Type != corev1.ServiceTypeExternalName {
		warn("spec.externalIPs is deprecated and may no longer be implemented in some clusters")
	}
	// Upstream does not validate loadBalancerIP, and logs an error for one
	// that is no IP; here there is no warning and no log.
	if ip := svc.Spec.LoadBalancerIP; ip != "" && netutils.ParseIPSloppy(ip) != nil {
		warn(validation.GetWarningsForIP(specPath.Child("loadBalancerIP"), ip)...)
	}
	for i, cidr := range svc.Spec.LoadBalancerSourceRanges {
		warn(validation.GetWarningsForCIDR(specPath.Child("loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && len(svc.Spec.ExternalIPs) > 0 {
		warn(fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "" {
		warn(fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	if d := svc.Spec.TrafficDistribution; d != nil && *d == corev1.ServiceTrafficDistributionPreferClose {
		warn(fmt.Sprintf("spec.trafficDistribution: %q is deprecated; use %q", corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone))
	}
	return warnings
}

// validateStatus is upstream's ValidateLoadBalancerStatus of a status
// update: ingress points only for a LoadBalancer; their IPs valid (or kept
// from old), each IP with its ipMode and no ipMode without an IP; their
// hostnames DNS names.
func validateStatus(svc, old *corev1.Service) field.ErrorList {
	p := field.NewPath("status", "loadBalancer", "ingress")
	ingress := svc.Status.LoadBalancer.Ingress
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer && len(ingress) != 0 {
		return field.ErrorList{field.Forbidden(p, "may only be used when `spec.type` is 'LoadBalancer'")}
	}
	var existing []string
	for _, in := range old.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			existing = append(existing, in.IP)
		}
	}
	modes := []corev1.LoadBalancerIPMode{corev1.LoadBalancerIPModeProxy, corev1.LoadBalancerIPModeVIP}
	var errs field.ErrorList
	for i, in := range ingress {
		ip := p.Index(i)
		if in.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(ip.Child("ip"), in.IP, true, existing)...)
		}
		switch {
		case in.IPMode == nil && in.IP != "":
			errs = append(errs, field.Required(ip.Child("ipMode"), "must be specified when `ip` is set"))
		case in.IPMode != nil && in.IP == "":
			errs = append(errs, field.Forbidden(ip.Child("ipMode"), "may not be specified when `ip` is not set"))
		case in.IPMode != nil && !slices.Contains(modes, *in.IPMode):
			errs = append(errs, field.NotSupported(ip.Child("ipMode"), in.IPMode, modes))
		}
		errs = append(errs, validateHostname(in.Hostname, ip.Child("hostname"))...)
	}
	return errs
}

// validateHostname checks a load balancer's hostname, if set: a DNS name,
// not an IP.
func validateHostname(hostname string, p *field.Path) field.ErrorList {
	if hostname == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(hostname) {
		errs = append(errs, field.Invalid(p, hostname, msg))
	}
	if netutils.ParseIPSloppy(hostname) != nil {
		errs = append(errs, field.Invalid(p, hostname, "must be a DNS name, not an IP address"))
	}
	return errs
}

// statusWarnings are kube-apiserver's of a status update: load balancer
// IPs in forms it deprecates.
func statusWarnings(obj, _ runtime.Object) []string {
	var warnings []string
	for i, in := range obj.(*corev1.Service).Status.LoadBalancer.Ingress {
		if in.IP != "" {
			warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "loadBalancer", "ingress").Index(i), in.IP)...)
		}
	}
	return warnings
}
