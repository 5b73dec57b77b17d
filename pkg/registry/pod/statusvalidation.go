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

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// validateStatusUpdate is the part of upstream's ValidatePodStatusUpdate a
// server without kubelets can judge, in its order: the annotations'
// update, conditions' types and observed generations, the nominated node
// (not on a bound pod), the observed generation, the QoS class
// (immutable), containers' state transitions, pod and host IPs. Not
// ported: containers' users, resource claims' statuses, volume health.
func validateStatusUpdate(p, old *corev1.Pod) field.ErrorList {
	statusPath := field.NewPath("status")
	errs := validateAnnotationUpdates(p, old)
	for i, c := range p.Status.Conditions {
		cp := statusPath.Child("conditions").Index(i)
		if c.ObservedGeneration < 0 {
			errs = append(errs, field.Invalid(cp.Child("observedGeneration"), c.ObservedGeneration, "must be a non-negative integer"))
		}
		switch c.Type {
		case corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized:
		default:
			for _, msg := range validation.IsQualifiedName(string(c.Type)) {
				errs = append(errs, field.Invalid(cp.Child("Type"), string(c.Type), msg)) // upstream's path, capitalised
			}
		}
	}
	nominated := p.Status.NominatedNodeName
	if nominated != old.Status.NominatedNodeName && nominated != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(nominated, false) {
			errs = append(errs, field.Invalid(statusPath.Child("nominatedNodeName"), nominated, msg))
		}
		// ClearingNominatedNodeNameAfterBinding is on (beta in 1.37).
		if old.Spec.NodeName != "" {
			errs = append(errs, field.Forbidden(statusPath.Child("nominatedNodeName"), "may not be set on pods that are already bound to a node"))
		}
	}
	if p.Status.ObservedGeneration < 0 {
		errs = append(errs, field.Invalid(statusPath.Child("observedGeneration"), p.Status.ObservedGeneration, "must be a non-negative integer"))
	}
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(p.Status.QOSClass, old.Status.QOSClass, statusPath.Child("qosClass"))...)
	errs = append(errs, validateStateTransitions(p, old)...)
	errs = append(errs, validatePodIPs(p, old)...)
	return append(errs, validateHostIPs(p, old)...)
}

// validatePodIPs is upstream's: each new IP valid (StrictIPCIDRValidation
// on), at most one of each family, podIPs[0] the podIP.
func validatePodIPs(p, old *corev1.Pod) field.ErrorList {
	path := field.NewPath("status", "podIPs")
	var existing, ips []string
	for _, ip := range old.Status.PodIPs {
		existing = append(existing, ip.IP)
	}
	var errs field.ErrorList
	for i, ip := range p.Status.PodIPs {
		errs = append(errs, validation.IsValidIPForLegacyField(path.Index(i), ip.IP, true, existing)...)
		ips = append(ips, ip.IP)
	}
	errs = append(errs, validateDualStack(ips, p.Status.PodIPs, path)...)
	switch has := len(p.Status.PodIPs) > 0; {
	case (p.Status.PodIP != "") != has:
		errs = append(errs, field.Invalid(path, p.Status.PodIPs, "podIP and podIPs must either both be set or both be unset"))
	case has && p.Status.PodIP != p.Status.PodIPs[0].IP:
		errs = append(errs, field.Invalid(path.Index(0).Child("ip"), p.Status.PodIPs[0].IP, "must be equal to `podIP`"))
	}
	return errs
}

// validateHostIPs is upstream's: hostIPs[0] the hostIP, each new IP
// valid, at most one of each family.
func validateHostIPs(p, old *corev1.Pod) field.ErrorList {
	if len(p.Status.HostIPs) == 0 {
		return nil
	}
	path := field.NewPath("status", "hostIPs")
	var errs field.ErrorList
	if p.Status.HostIP != p.Status.HostIPs[0].IP {
		errs = append(errs, field.Invalid(path.Index(0).Child("ip"), p.Status.HostIPs[0].IP, "must be equal to `hostIP`"))
	}
	var existing, ips []string
	for _, ip := range old.Status.HostIPs {
		existing = append(existing, ip.IP)
	}
	for i, ip := range p.Status.HostIPs {
		errs = append(errs, validation.IsValidIPForLegacyField(path.Index(i), ip.IP, true, existing)...)
		ips = append(ips, ip.IP)
	}
	return append(errs, validateDualStack(ips, p.Status.HostIPs, path)...)
}

// validateDualStack refuses more than one IP of a family (value is the
// field's, as the message shows it).
func validateDualStack(ips []string, value any, path *field.Path) field.ErrorList {
	if len(ips) < 2 {
		return nil
	}
	var errs field.ErrorList
	dualStack, err := netutils.IsDualStackIPStrings(ips)
	if err != nil {
		errs = append(errs, field.InternalError(path, fmt.Errorf("failed to check for dual stack with error:%v", err)))
	}
	if !dualStack || len(ips) > 2 {
		errs = append(errs, field.Invalid(path, value, "may specify no more than one IP for each IP family"))
	}
	return errs
}
