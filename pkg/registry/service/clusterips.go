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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// validateClusterIPs is upstream's ValidateServiceClusterIPsRelatedFields:
// clusterIPs in step with clusterIP, at most one IP of each family (or
// "None" alone), families and policy known, each IP of its family.
func validateClusterIPs(svc, old *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil // validateExternalName checks them
	}
	var errs field.ErrorList
	ipsPath := specPath.Child("clusterIPs")
	familiesPath := specPath.Child("ipFamilies")
	ips := svc.Spec.ClusterIPs
	switch {
	case svc.Spec.ClusterIP != "" && len(ips) == 0:
		errs = append(errs, field.Required(ipsPath, ""))
	case svc.Spec.ClusterIP != "" && ips[0] != svc.Spec.ClusterIP:
		errs = append(errs, field.Invalid(ipsPath, ips, "first value must match `clusterIP`"))
	case svc.Spec.ClusterIP == "" && len(ips) != 0:
		errs = append(errs, field.Invalid(ipsPath, ips, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, family := range svc.Spec.IPFamilies {
		if !slices.Contains(ipFamilies, family) {
			errs = append(errs, field.NotSupported(familiesPath.Index(i), family, ipFamilies))
		}
		if seen.Has(family) {
			errs = append(errs, field.Duplicate(familiesPath.Index(i), family))
		}
		seen.Insert(family)
	}
	if policy := svc.Spec.IPFamilyPolicy; policy != nil && !slices.Contains(ipFamilyPolicies, *policy) {
		errs = append(errs, field.NotSupported(specPath.Child("ipFamilyPolicy"), policy, ipFamilyPolicies))
	}
	var existing []string
	if old != nil {
		existing = old.Spec.ClusterIPs
	}
	invalidIPs := false
	for i, ip := range ips {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(ips) > 1 {
				invalidIPs = true
				errs = append(errs, field.Invalid(ipsPath, ips, "'None' must be the first and only value"))
			}
			continue
		}
		ipErrs := validation.IsValidIPForLegacyField(ipsPath.Index(i), ip, true, existing)
		invalidIPs = invalidIPs || len(ipErrs) > 0
		errs = append(errs, ipErrs...)
	}
	if len(ips) > 2 {
		errs = append(errs, field.Invalid(ipsPath, ips, "may only hold up to 2 values"))
	}
	if invalidIPs { // the checks below would only repeat the IPs' errors
		return errs
	}
	if len(ips) > 1 {
		if dual, err := netutils.IsDualStackIPStrings(ips); err != nil {
			errs = append(errs, field.InternalError(ipsPath, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		} else if !dual {
			errs = append(errs, field.Invalid(ipsPath, ips, "may specify no more than one IP for each IP family"))
		}
	}
	if isHeadless(svc) {
		return errs
	}
	for i, ip := range ips {
		if i >= len(svc.Spec.IPFamilies) {
			break
		}
		switch family := svc.Spec.IPFamilies[i]; {
		case family == corev1.IPv4Protocol && netutils.IsIPv6String(ip):
			errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
		case family == corev1.IPv6Protocol && !netutils.IsIPv6String(ip):
			errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
		}
	}
	return errs
}

// validateUpgradeDowngradeClusterIPs refuses an update that changes a
// cluster IP, or releases one but as a dual-stack service turned
// SingleStack may (upstream's words, as ExternalName services and
// headless ones that stay so are not checked).
func validateUpgradeDowngradeClusterIPs(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName || isHeadless(old) && isHeadless(svc) {
		return nil
	}
	var errs field.ErrorList
	p := specPath.Child("clusterIPs")
	oldIPs, ips := old.Spec.ClusterIPs, svc.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(ips):
		for i, ip := range oldIPs {
			if ip != ips[i] {
				errs = append(errs, field.Invalid(p.Index(i), ips, "may not change once set"))
			}
		}
	case len(oldIPs) > len(ips):
		if len(ips) == 0 {
			errs = append(errs, field.Invalid(p.Index(0), ips, "primary clusterIP can not be unset"))
		}
		if len(ips) > 0 && ips[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(p.Index(0), ips, "may not change once set"))
		}
		if len(ips) == 1 && !singleStack(svc) {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	case len(oldIPs) > 0 && ips[0] != oldIPs[0]:
		errs = append(errs, field.Invalid(p.Index(0), ips, "may not change once set"))
	}
	return errs
}

// validateUpgradeDowngradeIPFamilies is validateUpgradeDowngradeClusterIPs
// of the families (its paths and values as upstream's, which name
// ipFamilies[0] for any family, and show the cluster IPs for some).
func validateUpgradeDowngradeIPFamilies(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName || isHeadless(old) || isHeadless(svc) {
		return nil
	}
	var errs field.ErrorList
	p := specPath.Child("ipFamilies").Index(0)
	oldFamilies, families := old.Spec.IPFamilies, svc.Spec.IPFamilies
	switch {
	case len(oldFamilies) == len(families):
		for i, family := range oldFamilies {
			if family != families[i] {
				errs = append(errs, field.Invalid(p, families, "may not change once set"))
			}
		}
	case len(oldFamilies) > len(families):
		if len(svc.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(p, families, "primary ipFamily can not be unset"))
		}
		if len(families) > 0 && families[0] != oldFamilies[0] {
			errs = append(errs, field.Invalid(p, svc.Spec.ClusterIPs, "may not change once set"))
		}
		if len(families) == 1 && !singleStack(svc) {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	case len(oldFamilies) > 0 && len(families) > 0 && families[0] != oldFamilies[0]:
		errs = append(errs, field.Invalid(p, svc.Spec.ClusterIPs, "may not change once set"))
	}
	return errs
}

func singleStack(svc *corev1.Service) bool {
	return svc.Spec.IPFamilyPolicy != nil && *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
}

// initFamilies is upstream's initIPFamilyFields on a cluster of IPv4
// cluster IPs alone, run before an address is allocated (old is the
// Service an update replaces, or nil): it sets svc's policy and families
// where they were left out, and refuses, before validation does, cluster
// IPs validateClusterIPs refuses, dual stack, and IPv6.
func initFamilies(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || preferDualStackKept(svc, old) {
		return nil
	}
	headlessSelectorless := svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0
	if svc.Spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			policy = *old.Spec.IPFamilyPolicy
		case headlessSelectorless:
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		svc.Spec.IPFamilyPolicy = &policy
	}
	if errs := validateClusterIPs(svc, old); len(errs) > 0 {
		return invalid(svc, errs...)
	}
	var errs field.ErrorList
	policyPath := specPath.Child("ipFamilyPolicy")
	policy := *svc.Spec.IPFamilyPolicy
	if old != nil && policy == corev1.IPFamilyPolicySingleStack {
		// Single stack kept or asked for: the secondary IP and family go.
		if slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && len(svc.Spec.ClusterIPs) > 1 {
			svc.Spec.ClusterIPs = svc.Spec.ClusterIPs[:1]
		}
		if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) && len(svc.Spec.IPFamilies) > 1 {
			svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
		}
	} else if old != nil {
		if len(svc.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) < len(old.Spec.ClusterIPs) {
			errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"))
		}
		if len(svc.Spec.IPFamilies) > 0 && len(svc.Spec.IPFamilies) < len(old.Spec.IPFamilies) {
			errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
		}
	}
	if policy == corev1.IPFamilyPolicySingleStack && len(svc.Spec.ClusterIPs) == 2 {
		errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
	}
	if policy == corev1.IPFamilyPolicySingleStack && len(svc.Spec.IPFamilies) == 2 {
		errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(svc.Spec.IPFamilies) {
			continue
		}
		if family := familyOf(ip); family != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(i), svc.Spec.ClusterIPs, fmt.Sprintf("%s is not configured on this cluster", family)))
		} else {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, family)
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if headlessSelectorless {
		// Any families will do: such a service has no addresses.
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		if len(svc.Spec.IPFamilies) < 2 && policy != corev1.IPFamilyPolicySingleStack {
			other := corev1.IPv6Protocol
			if svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
				other = corev1.IPv4Protocol
			}
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, other)
		}
		return nil
	}
	if policy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, family := range svc.Spec.IPFamilies {
		if family != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(specPath.Child("ipFamilies").Index(i), family, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	return nil
}

// preferDualStackKept reports whether an update keeps a PreferDualStack
// service's type, addresses and families, which upstream leaves as they
// are whatever the cluster now serves.
func preferDualStackKept(svc, old *corev1.Service) bool {
	prefer := func(s *corev1.Service) bool {
		return s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyPreferDualStack
	}
	return old != nil && svc.Spec.IPFamilyPolicy != nil && old.Spec.Type == svc.Spec.Type && needsClusterIP(svc) &&
		prefer(svc) && prefer(old) &&
		slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies)
}
