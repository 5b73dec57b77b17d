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

package endpointslice

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpoints"
)

// NewStorage returns the storage of endpointslices.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	// EndpointSlices have no spec, yet a generation: upstream starts it at 1
	// and counts every change but to metadata (labels excepted).
	s.OnCreate = func(obj runtime.Object) { obj.(*discoveryv1.EndpointSlice).Generation = 1 }
	s.OnUpdate = func(obj, old runtime.Object) {
		eps, oldEPS := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
		eps.Generation = oldEPS.Generation
		if eps.AddressType != oldEPS.AddressType ||
			!apiequality.Semantic.DeepEqual(eps.Endpoints, oldEPS.Endpoints) ||
			!apiequality.Semantic.DeepEqual(eps.Ports, oldEPS.Ports) ||
			!apiequality.Semantic.DeepEqual(eps.Labels, oldEPS.Labels) {
			eps.Generation++
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*discoveryv1.EndpointSlice), nil) }
	s.Warnings = warnings
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validate(obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: discoveryv1.Resource("endpointslices"),
		Singular: "endpointslice",
		New:      func() runtime.Object { return &discoveryv1.EndpointSlice{} },
		NewList:  func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
		Strategy: s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
				{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
				{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
				registry.AgeColumn,
			},
			Cells: func(obj runtime.Object) []any {
				eps := obj.(*discoveryv1.EndpointSlice)
				return []any{eps.Name, string(eps.AddressType), formatPorts(eps.Ports), formatEndpoints(eps.Endpoints), registry.Age(eps.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"endpointslices": store}, nil
}

const maxListed = 3

// formatPorts prints up to three ports as kubectl does: the number, else
// the name, else "*".
func formatPorts(ports []discoveryv1.EndpointPort) string {
	var list []string
	for _, port := range ports {
		if len(list) == maxListed {
			break
		}
		switch {
		case port.Port != nil:
			list = append(list, strconv.Itoa(int(*port.Port)))
		case port.Name != nil:
			list = append(list, *port.Name)
		default:
			list = append(list, "*")
		}
	}
	return listWithMore(list, len(ports))
}

// formatEndpoints prints up to three addresses of the endpoints.
func formatEndpoints(eps []discoveryv1.Endpoint) string {
	var list []string
	count := 0
	for _, ep := range eps {
		for _, a := range ep.Addresses {
			if len(list) < maxListed {
				list = append(list, a)
			}
			count++
		}
	}
	return listWithMore(list, count)
}

func listWithMore(list []string, count int) string {
	out := strings.Join(list, ",")
	switch {
	case count > maxListed:
		return fmt.Sprintf("%s + %d more...", out, count-maxListed)
	case out == "":
		return "<unset>"
	}
	return out
}

var (
	supportedAddressTypes = []discoveryv1.AddressType{discoveryv1.AddressTypeFQDN, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}
	supportedProtocols    = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}
)

// Upstream's limits. The API reference still says 100 ports; upstream's
// validation has allowed 20000 since the limit was raised.
const (
	maxAddresses      = 100
	maxPorts          = 20000
	maxEndpoints      = 1000
	maxTopologyLabels = 16
	maxZoneHints      = 8
)

// validate checks the cheap parts of upstream's ValidateEndpointSlice, in
// its order; old is the slice an update replaces, or nil. What upstream's
// declarative validation reports (the address type, kept on update, and
// each endpoint's number of addresses) comes last, as there.
func validate(eps, old *discoveryv1.EndpointSlice) field.ErrorList {
	var declared field.ErrorList
	switch p := field.NewPath("addressType"); {
	case eps.AddressType == "":
		declared = append(declared, field.Required(p, ""))
	case !slices.Contains(supportedAddressTypes, eps.AddressType):
		declared = append(declared, field.NotSupported(p, eps.AddressType, supportedAddressTypes))
	}
	if old != nil && eps.AddressType != old.AddressType { // its message shows no value
		declared = append(declared, field.Invalid(field.NewPath("addressType"), nil, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	errs := validatePorts(eps.Ports, field.NewPath("ports"))
	endpointErrs, addressCounts := validateEndpoints(eps.Endpoints, eps.AddressType, field.NewPath("endpoints"))
	// An update that keeps the endpoints keeps what older servers accepted.
	if old == nil || !apiequality.Semantic.DeepEqual(old.Endpoints, eps.Endpoints) {
		errs = append(errs, endpointErrs...)
		declared = append(declared, addressCounts...)
	}
	return append(errs, declared...)
}

// validateEndpoints returns the errors of the endpoints, and apart those
// of their numbers of addresses.
func validateEndpoints(eps []discoveryv1.Endpoint, addressType discoveryv1.AddressType, p *field.Path) (errs, addressCounts field.ErrorList) {
	if len(eps) > maxEndpoints {
		return field.ErrorList{field.TooMany(p, len(eps), maxEndpoints)}, nil
	}
	for i, ep := range eps {
		ip := p.Index(i)
		ap := ip.Child("addresses")
		switch {
		case len(ep.Addresses) == 0:
			addressCounts = append(addressCounts, field.Required(ap, ""))
		case len(ep.Addresses) > maxAddresses:
			addressCounts = append(addressCounts, field.TooMany(ap, len(ep.Addresses), maxAddresses))
		}
		for j, a := range ep.Addresses {
			errs = append(errs, validateAddress(a, addressType, ap, j)...)
		}
		if ep.NodeName != nil {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
				errs = append(errs, field.Invalid(ip.Child("nodeName"), *ep.NodeName, msg))
			}
		}
		tp := ip.Child("deprecatedTopology")
		if len(ep.DeprecatedTopology) > maxTopologyLabels {
			errs = append(errs, field.TooMany(tp, len(ep.DeprecatedTopology), maxTopologyLabels))
		}
		errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, tp)...)
		if ep.Hostname != nil {
			for _, msg := range validation.IsDNS1123Label(*ep.Hostname) {
				errs = append(errs, field.Invalid(ip.Child("hostname"), *ep.Hostname, msg))
			}
		}
		if ep.Hints != nil {
			errs = append(errs, validateHints(ep.Hints, ip.Child("hints"))...)
		}
	}
	return errs, addressCounts
}

// validateAddress checks the address at index i of the addresses at ap
// against the slice's address type; addresses of an unknown type (already
// an error) are not checked. As upstream, an IP of the other family is
// reported at ap, the others at their index.
func validateAddress(a string, addressType discoveryv1.AddressType, ap *field.Path, i int) field.ErrorList {
	p := ap.Index(i)
	switch addressType {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		// Upstream's StrictIPCIDRValidation is on (its 1.37 default); IPv6
		// addresses must be canonical too.
		ipErrs := validation.IsValidIPForLegacyField(p, a, true, nil)
		if addressType == discoveryv1.AddressTypeIPv6 {
			ipErrs = validation.IsValidIP(p, a)
		}
		if len(ipErrs) > 0 {
			return ipErrs
		}
		var errs field.ErrorList
		if addressType == discoveryv1.AddressTypeIPv4 && !netutils.IsIPv4String(a) {
			errs = append(errs, field.Invalid(ap, a, "must be an IPv4 address"))
		}
		if addressType == discoveryv1.AddressTypeIPv6 && !netutils.IsIPv6String(a) {
			errs = append(errs, field.Invalid(ap, a, "must be an IPv6 address"))
		}
		return append(errs, endpoints.ValidateEndpointIP(a, p)...)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, a)
	}
	return nil
}

func validateHints(hints *discoveryv1.EndpointHints, p *field.Path) field.ErrorList {
	zp := p.Child("forZones")
	if len(hints.ForZones) > maxZoneHints {
		return field.ErrorList{field.TooMany(zp, len(hints.ForZones), maxZoneHints)}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, zone := range hints.ForZones {
		np := zp.Index(i).Child("name")
		if seen.Has(zone.Name) {
			errs = append(errs, field.Duplicate(np, zone.Name))
		}
		seen.Insert(zone.Name)
		for _, msg := range validation.IsValidLabelValue(zone.Name) {
			errs = append(errs, field.Invalid(np, zone.Name, msg))
		}
	}
	return errs
}

func validatePorts(ports []discoveryv1.EndpointPort, p *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxPorts)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		pp := p.Index(i)
		// Defaulting makes a missing name "".
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, field.Invalid(pp.Child("name"), name, msg))
			}
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(pp.Child("name"), name))
		}
		names.Insert(name)
		switch {
		case port.Protocol == nil:
			errs = append(errs, field.Required(pp.Child("protocol"), ""))
		case !slices.Contains(supportedProtocols, *port.Protocol):
			errs = append(errs, field.NotSupported(pp.Child("protocol"), *port.Protocol, supportedProtocols))
		}
		if port.AppProtocol != nil {
			for _, msg := range validation.IsQualifiedName(*port.AppProtocol) {
				errs = append(errs, field.Invalid(pp.Child("appProtocol"), *port.AppProtocol, msg))
			}
		}
	}
	return errs
}

// warnings are kube-apiserver's: on create, of the deprecated FQDN address
// type; on create and update, of IPs in forms it deprecates, unless the
// endpointslice controllers, which write none, wrote them.
func warnings(obj, old runtime.Object) []string {
	eps := obj.(*discoveryv1.EndpointSlice)
	var warnings []string
	if old == nil && eps.AddressType == discoveryv1.AddressTypeFQDN {
		warnings = append(warnings, "spec.addressType: FQDN endpoints are deprecated") // upstream's path, as it writes it
	}
	switch eps.Labels[discoveryv1.LabelManagedBy] {
	case "endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io":
		return warnings
	}
	if eps.AddressType == discoveryv1.AddressTypeFQDN { // no IPs: upstream checks them too, and logs an error
		return warnings
	}
	for i, ep := range eps.Endpoints {
		for j, a := range ep.Addresses {
			warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("endpoints").Index(i).Child("addresses").Index(j), a)...)
		}
	}
	return warnings
}
