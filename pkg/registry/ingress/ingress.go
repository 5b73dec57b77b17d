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

package ingress

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of ingresses and ingresses/status.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(true)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(&obj.(*networkingv1.Ingress).Spec, field.NewPath("spec"))
	}
	main, status := registry.SpecAndStatus{GroupVersion: "networking.k8s.io/v1", Generation: true}.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateStatus(&obj.(*networkingv1.Ingress).Status.LoadBalancer, &old.(*networkingv1.Ingress).Status.LoadBalancer)
	}
	status.Warnings = func(obj, _ runtime.Object) []string {
		var warnings []string
		for i, in := range obj.(*networkingv1.Ingress).Status.LoadBalancer.Ingress {
			if in.IP != "" {
				warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "loadBalancer", "ingress").Index(i), in.IP)...)
			}
		}
		return warnings
	}
	main.Warnings = func(obj, old runtime.Object) []string { // on create only, as upstream
		ing := obj.(*networkingv1.Ingress)
		if _, ok := ing.Annotations["kubernetes.io/ingress.class"]; ok && old == nil && ing.Spec.IngressClassName == nil {
			return []string{`annotation "kubernetes.io/ingress.class" is deprecated, please use 'spec.ingressClassName' instead`}
		}
		return nil
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   networkingv1.Resource("ingresses"),
		Singular:   "ingress",
		ShortNames: []string{"ing"},
		New:        func() runtime.Object { return &networkingv1.Ingress{} },
		NewList:    func() runtime.Object { return &networkingv1.IngressList{} },
		Strategy:   main,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"ingresses":        store,
		"ingresses/status": registry.NewStatusREST(store, status),
	}, nil
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		ing := obj.(*networkingv1.Ingress)
		class := "<none>"
		if ing.Spec.IngressClassName != nil {
			class = *ing.Spec.IngressClassName
		}
		ports := "80"
		if len(ing.Spec.TLS) > 0 {
			ports = "80, 443"
		}
		return []any{ing.Name, class, formatHosts(ing.Spec.Rules), formatAddress(ing.Status.LoadBalancer), ports, registry.Age(ing.CreationTimestamp)}
	},
}

// formatHosts prints up to three hosts as kubectl does: rules without a
// host are skipped, no host at all is "*", and once three are listed any
// further rule counts as more.
func formatHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var list []string
	more := false
	for _, r := range rules {
		if len(list) == max {
			more = true
		}
		if !more && r.Host != "" {
			list = append(list, r.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	out := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", out, len(rules)-max)
	}
	return out
}

// formatAddress prints the load balancer's IPs (else hostnames), sorted
// and unique, unclipped: a server-side table is always the wide one.
func formatAddress(lb networkingv1.IngressLoadBalancerStatus) string {
	out := sets.New[string]()
	for _, in := range lb.Ingress {
		switch {
		case in.IP != "":
			out.Insert(in.IP)
		case in.Hostname != "":
			out.Insert(in.Hostname)
		}
	}
	return strings.Join(sets.List(out), ",")
}

// validateSpec checks the cheap parts of upstream's ValidateIngressSpec.
func validateSpec(spec *networkingv1.IngressSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(p, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateBackend(spec.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i, rule := range spec.Rules {
		errs = append(errs, validateRule(&rule, p.Child("rules").Index(i))...)
	}
	for i, tls := range spec.TLS {
		tp := p.Child("tls").Index(i)
		for j, host := range tls.Hosts {
			for _, msg := range hostMessages(host) {
				errs = append(errs, field.Invalid(tp.Child("hosts").Index(j), host, msg))
			}
		}
		if tls.SecretName != "" {
			for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(tls.SecretName, false) {
				errs = append(errs, field.Invalid(tp.Child("secretName"), tls.SecretName, msg))
			}
		}
	}
	if c := spec.IngressClassName; c != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*c, false) {
			errs = append(errs, field.Invalid(p.Child("ingressClassName"), *c, msg))
		}
	}
	return errs
}

// hostMessages checks a host: a DNS subdomain, or one with a leading "*." wildcard.
func hostMessages(host string) []string {
	if strings.Contains(host, "*") {
		return validation.IsWildcardDNS1123Subdomain(host)
	}
	return validation.IsDNS1123Subdomain(host)
}

func validateRule(rule *networkingv1.IngressRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rule.Host != "" {
		if netutils.ParseIPSloppy(rule.Host) != nil {
			errs = append(errs, field.Invalid(p.Child("host"), rule.Host, "must be a DNS name, not an IP address"))
		}
		for _, msg := range hostMessages(rule.Host) {
			errs = append(errs, field.Invalid(p.Child("host"), rule.Host, msg))
		}
	}
	if rule.HTTP == nil {
		return errs
	}
	hp := p.Child("http")
	if len(rule.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(hp.Child("paths"), ""))
	}
	for i := range rule.HTTP.Paths {
		errs = append(errs, validatePath(&rule.HTTP.Paths[i], hp.Child("paths").Index(i))...)
	}
	return errs
}

var (
	supportedPathTypes   = []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific, networkingv1.PathTypePrefix}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

func validatePath(hp *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	if hp.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	pp := p.Child("path")
	switch *hp.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(pp, hp.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(hp.Path, seq) {
				errs = append(errs, field.Invalid(pp, hp.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(hp.Path, suffix) {
				errs = append(errs, field.Invalid(pp, hp.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if hp.Path != "" && !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(pp, hp.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *hp.PathType, supportedPathTypes))
	}
	return append(errs, validateBackend(&hp.Backend, p.Child("backend"))...)
}

// validateBackend requires exactly one of a service (with a port name or
// number) and a resource.
func validateBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Resource != nil && b.Service != nil:
		errs = append(errs, field.Invalid(p, "", "cannot set both resource and service backends"))
	case b.Resource != nil:
		rp := p.Child("resource")
		if g := b.Resource.APIGroup; g != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*g) {
				errs = append(errs, field.Invalid(rp.Child("apiGroup"), *g, msg))
			}
		}
		errs = append(errs, validateSegment(b.Resource.Kind, rp.Child("kind"))...)
		errs = append(errs, validateSegment(b.Resource.Name, rp.Child("name"))...)
	case b.Service != nil:
		sp := p.Child("service")
		if b.Service.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		} else {
			// A Service's name is a DNS label (RelaxedServiceNameValidation, GA in 1.37).
			for _, msg := range apimachineryvalidation.NameIsDNSLabel(b.Service.Name, false) {
				errs = append(errs, field.Invalid(sp.Child("name"), b.Service.Name, msg))
			}
		}
		port := b.Service.Port
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
		case port.Name != "":
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(sp.Child("port", "name"), port.Name, msg))
			}
		case port.Number != 0:
			for _, msg := range validation.IsValidPortNum(int(port.Number)) {
				errs = append(errs, field.Invalid(sp.Child("port", "number"), port.Number, msg))
			}
		default:
			errs = append(errs, field.Required(p, "port name or number is required"))
		}
	default:
		errs = append(errs, field.Invalid(p, "", "resource or service backend is required"))
	}
	return errs
}

func validateSegment(value string, p *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range path.ValidatePathSegmentName(value, false) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

// validateStatus is upstream's ValidateIngressLoadBalancerStatus: the
// ingress points' IPs valid (or kept from old), their hostnames DNS names.
func validateStatus(status, old *networkingv1.IngressLoadBalancerStatus) field.ErrorList {
	var existing []string
	for _, in := range old.Ingress {
		if in.IP != "" {
			existing = append(existing, in.IP)
		}
	}
	var errs field.ErrorList
	for i, in := range status.Ingress {
		p := field.NewPath("status", "loadBalancer", "ingress").Index(i)
		if in.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(p.Child("ip"), in.IP, true, existing)...)
		}
		if in.Hostname == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(in.Hostname) {
			errs = append(errs, field.Invalid(p.Child("hostname"), in.Hostname, msg))
		}
		if netutils.ParseIPSloppy(in.Hostname) != nil {
			errs = append(errs, field.Invalid(p.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
		}
	}
	return errs
}
