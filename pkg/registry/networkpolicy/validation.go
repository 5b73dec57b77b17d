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

package networkpolicy

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// validatePolicy is upstream's validation of a policy's spec on a create (old
// nil) or an update, with what 1.37's declarative validation (beta, on by
// default) makes of it: a missing ipBlock cidr in a list of rules that a
// create sets or an update changes is reported after all other errors.
func validatePolicy(spec, old *networkingv1.NetworkPolicySpec) field.ErrorList {
	o := options{}
	if old != nil {
		o = updateOptions(old)
	}
	return registry.WithDeclarative(validateSpec(spec, o), missingCIDRs(spec, old))
}

// missingCIDRs are the declarative errors of peers with an ipBlock without
// cidr, in the rules a create sets or an update changes.
func missingCIDRs(spec, old *networkingv1.NetworkPolicySpec) field.ErrorList {
	var errs field.ErrorList
	missing := func(peers []networkingv1.NetworkPolicyPeer, p *field.Path) {
		for i, peer := range peers {
			if peer.IPBlock != nil && peer.IPBlock.CIDR == "" {
				errs = append(errs, field.Required(p.Index(i).Child("ipBlock", "cidr"), ""))
			}
		}
	}
	if old == nil || !apiequality.Semantic.DeepEqual(spec.Ingress, old.Ingress) {
		for i, rule := range spec.Ingress {
			missing(rule.From, specPath.Child("ingress").Index(i).Child("from"))
		}
	}
	if old == nil || !apiequality.Semantic.DeepEqual(spec.Egress, old.Egress) {
		for i, rule := range spec.Egress {
			missing(rule.To, specPath.Child("egress").Index(i).Child("to"))
		}
	}
	return errs
}

var specPath = field.NewPath("spec")

// options are upstream's NetworkPolicyValidationOptions: what an update may
// keep of the stored policy though it is no longer valid.
type options struct {
	allowInvalidLabelValue bool
	validOldCIDRs          []string
}

// updateOptions lets an update keep the old pod selector's invalid label
// values and any CIDR the old policy had.
func updateOptions(old *networkingv1.NetworkPolicySpec) options {
	o := options{allowInvalidLabelValue: len(metav1validation.ValidateLabelSelector(&old.PodSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0}
	var peers []networkingv1.NetworkPolicyPeer
	for _, in := range old.Ingress {
		peers = append(peers, in.From...)
	}
	for _, out := range old.Egress {
		peers = append(peers, out.To...)
	}
	for _, peer := range peers {
		if peer.IPBlock != nil {
			o.validOldCIDRs = append(append(o.validOldCIDRs, peer.IPBlock.CIDR), peer.IPBlock.Except...)
		}
	}
	return o
}

var (
	supportedProtocols   = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}
	supportedPolicyTypes = []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
)

// validateSpec is upstream's ValidateNetworkPolicySpec.
func validateSpec(spec *networkingv1.NetworkPolicySpec, o options) field.ErrorList {
	p := specPath
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selectorOpts, p.Child("podSelector"))
	for i, in := range spec.Ingress {
		rp := p.Child("ingress").Index(i)
		errs = append(errs, validateRule(in.Ports, in.From, rp, rp.Child("from"), o)...)
	}
	for i, out := range spec.Egress {
		rp := p.Child("egress").Index(i)
		errs = append(errs, validateRule(out.Ports, out.To, rp, rp.Child("to"), o)...)
	}
	if len(spec.PolicyTypes) > len(supportedPolicyTypes) {
		return append(errs, field.Invalid(p.Child("policyTypes"), &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if !slices.Contains(supportedPolicyTypes, string(t)) {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, supportedPolicyTypes))
		}
	}
	return errs
}

func validateRule(ports []networkingv1.NetworkPolicyPort, peers []networkingv1.NetworkPolicyPeer, rp, peersPath *field.Path, o options) field.ErrorList {
	var errs field.ErrorList
	for i := range ports {
		errs = append(errs, validatePort(&ports[i], rp.Child("ports").Index(i))...)
	}
	for i := range peers {
		errs = append(errs, validatePeer(&peers[i], peersPath.Index(i), o)...)
	}
	return errs
}

// validatePort is upstream's ValidateNetworkPolicyPort.
func validatePort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Protocol != nil && !slices.Contains(supportedProtocols, string(*port.Protocol)) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *port.Protocol, supportedProtocols))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

// validatePeer is upstream's ValidateNetworkPolicyPeer: at least one of the
// selectors or an IP block, and an IP block alone.
func validatePeer(peer *networkingv1.NetworkPolicyPeer, p *field.Path, o options) field.ErrorList {
	var errs field.ErrorList
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: o.allowInvalidLabelValue}
	peers := 0
	if peer.PodSelector != nil {
		peers++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, selectorOpts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		peers++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selectorOpts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		peers++
		errs = append(errs, validateIPBlock(peer.IPBlock, p.Child("ipBlock"), o)...)
	}
	switch {
	case peers == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case peers > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock is upstream's ValidateIPBlock with StrictIPCIDRValidation
// on (its 1.37 default): canonical CIDRs, except a strict subset of cidr.
func validateIPBlock(b *networkingv1.IPBlock, p *field.Path, o options) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "").MarkCoveredByDeclarative()}
	}
	errs := validation.IsValidCIDRForLegacyField(p.Child("cidr"), b.CIDR, true, o.validOldCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(b.CIDR)
	if err != nil {
		return errs
	}
	for i, except := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDRForLegacyField(ep, except, true, o.validOldCIDRs)...)
		_, exceptCIDR, err := netutils.ParseCIDRSloppy(except)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		exceptLen, _ := exceptCIDR.Mask.Size()
		if !cidr.Contains(exceptCIDR.IP) || cidrLen >= exceptLen {
			errs = append(errs, field.Invalid(ep, except, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}
