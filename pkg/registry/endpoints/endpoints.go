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

package endpoints

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of endpoints.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	// As upstream: controllers PUT the endpoints of a service.
	s.CreateOnUpdate = true
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSubsets(obj.(*corev1.Endpoints).Subsets, field.NewPath("subsets"))
	}
	s.Warnings = func(obj, _ runtime.Object) []string { return warnings(obj.(*corev1.Endpoints)) }
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		subsets := obj.(*corev1.Endpoints).Subsets
		errs := validateSubsets(subsets, field.NewPath("subsets"))
		// An update that keeps the subsets keeps what older servers accepted.
		if len(errs) > 0 && apiequality.Semantic.DeepEqual(old.(*corev1.Endpoints).Subsets, subsets) {
			return nil
		}
		return errs
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("endpoints"),
		Singular:   "endpoints",
		ShortNames: []string{"ep"},
		New:        func() runtime.Object { return &corev1.Endpoints{} },
		NewList:    func() runtime.Object { return &corev1.EndpointsList{} },
		Strategy:   s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
				registry.AgeColumn,
			},
			Cells: func(obj runtime.Object) []any {
				ep := obj.(*corev1.Endpoints)
				return []any{ep.Name, formatEndpoints(ep.Subsets), registry.Age(ep.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"endpoints": store}, nil
}

// formatEndpoints prints up to three ready addresses ("ip:port", or just
// the IP in a subset without ports), as kubectl's ENDPOINTS column does.
func formatEndpoints(subsets []corev1.EndpointSubset) string {
	if len(subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	count := 0
	for _, ss := range subsets {
		if len(ss.Ports) == 0 {
			// A headless service may have no ports.
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	out := strings.Join(list, ",")
	if count > max {
		return fmt.Sprintf("%s + %d more...", out, count-max)
	}
	return out
}

var supportedProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}

// validateSubsets checks the subsets as upstream's validateEndpointSubsets.
func validateSubsets(subsets []corev1.EndpointSubset, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range subsets {
		sp := p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(sp, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateAddress(&ss.Addresses[j], sp.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateAddress(&ss.NotReadyAddresses[j], sp.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validatePort(&ss.Ports[j], len(ss.Ports) > 1, sp.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	// Upstream's StrictIPCIDRValidation is on: its 1.37 default.
	errs := validation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)
	if a.Hostname != "" {
		for _, msg := range validation.IsDNS1123Label(a.Hostname) {
			errs = append(errs, field.Invalid(p.Child("hostname"), a.Hostname, msg))
		}
	}
	if a.NodeName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*a.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *a.NodeName, msg))
		}
	}
	return append(errs, ValidateEndpointIP(a.IP, p.Child("ip"))...)
}

// ValidateEndpointIP is upstream's: an IP (parsed sloppily, as history
// allows) that makes sense as an endpoint, not unspecified, loopback nor
// link-local.
func ValidateEndpointIP(ip string, p *field.Path) field.ErrorList {
	parsed := netutils.ParseIPSloppy(ip)
	if parsed == nil {
		return field.ErrorList{field.Invalid(p, ip, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if parsed.IsUnspecified() {
		errs = append(errs, field.Invalid(p, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if parsed.IsLoopback() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if parsed.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if parsed.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// validatePort checks one port; a subset of several ports needs their names.
func validatePort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		for _, msg := range validation.IsDNS1123Label(port.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), port.Name, msg))
		}
	}
	for _, msg := range validation.IsValidPortNum(int(port.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port.Port, msg))
	}
	switch {
	case port.Protocol == "":
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	case !slices.Contains(supportedProtocols, port.Protocol):
		errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol, supportedProtocols))
	}
	if port.AppProtocol != nil {
		for _, msg := range validation.IsQualifiedName(*port.AppProtocol) {
			errs = append(errs, field.Invalid(p.Child("appProtocol"), *port.AppProtocol, msg))
		}
	}
	return errs
}

// warnings are kube-apiserver's of a create or update: IPs in forms it
// deprecates, unless the endpoints controller, which writes none, wrote them.
func warnings(ep *corev1.Endpoints) []string {
	if ep.Labels["endpoints.kubernetes.io/managed-by"] == "endpoint-controller" {
		return nil
	}
	var warnings []string
	for i, ss := range ep.Subsets {
		p := field.NewPath("subsets").Index(i)
		for j, a := range ss.Addresses {
			warnings = append(warnings, validation.GetWarningsForIP(p.Child("addresses").Index(j).Child("ip"), a.IP)...)
		}
		for j, a := range ss.NotReadyAddresses {
			warnings = append(warnings, validation.GetWarningsForIP(p.Child("notReadyAddresses").Index(j).Child("ip"), a.IP)...)
		}
	}
	return warnings
}
