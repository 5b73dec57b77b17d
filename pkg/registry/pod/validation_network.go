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

package pod

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Upstream's checks of a pod spec's networking: host ports, DNS and host
// aliases. IPs are checked with StrictIPCIDRValidation on, its 1.37 default.

// Upstream's limits of a pod's DNS config.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

// hostPortConflicts refuses a host port (protocol, IP and number) two
// ports of containers take. As upstream, the paths count containers from
// p's first: it checks each init container on its own, at index 0.
func hostPortConflicts(containers []corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	taken := sets.New[string]()
	for i, c := range containers {
		for j, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if taken.Has(key) {
				errs = append(errs, field.Duplicate(p.Index(i).Child("ports").Index(j).Child("hostPort"), key))
			}
			taken.Insert(key)
		}
	}
	return errs
}

func validateDNSPolicy(policy corev1.DNSPolicy, p *field.Path) field.ErrorList {
	switch policy {
	// Empty, upstream's Required, cannot reach here: decoding defaults it.
	case corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone, "":
		return nil
	}
	return field.ErrorList{field.NotSupported(p, policy,
		[]corev1.DNSPolicy{corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone})}
}

func validateDNSConfig(config *corev1.PodDNSConfig, policy corev1.DNSPolicy, p *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if config == nil {
			return field.ErrorList{field.Required(p, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(config.Nameservers) == 0 {
			return field.ErrorList{field.Required(p.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if config == nil {
		return nil
	}
	var errs field.ErrorList
	if len(config.Nameservers) > maxDNSNameservers {
		errs = append(errs, field.Invalid(p.Child("nameservers"), config.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range config.Nameservers {
		errs = append(errs, validation.IsValidIPForLegacyField(p.Child("nameservers").Index(i), ns, true, nil)...)
	}
	if len(config.Searches) > maxDNSSearchPaths {
		errs = append(errs, field.Invalid(p.Child("searches"), config.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(config.Searches, " ")) > maxDNSSearchListChars {
		errs = append(errs, field.Invalid(p.Child("searches"), config.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, search := range config.Searches {
		if search == "." {
			continue
		}
		search = strings.TrimSuffix(search, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(search) {
			errs = append(errs, field.Invalid(p.Child("searches").Index(i), search, msg))
		}
	}
	for i, option := range config.Options {
		if option.Name == "" {
			errs = append(errs, field.Required(p.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

func validateHostAliases(aliases []corev1.HostAlias, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, alias := range aliases {
		errs = append(errs, validation.IsValidIPForLegacyField(p.Index(i).Child("ip"), alias.IP, true, nil)...)
		for j, hostname := range alias.Hostnames {
			for _, msg := range validation.IsDNS1123Subdomain(hostname) {
				errs = append(errs, field.Invalid(p.Index(i).Child("hostnames").Index(j), hostname, msg))
			}
		}
	}
	return errs
}
