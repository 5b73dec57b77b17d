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
	"maps"
	"reflect"
	"slices"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// allowPrivileged is kube-apiserver's --allow-privileged: process-wide,
// as upstream's (its capabilities package), true unless the
// kube-apiserver persona is told otherwise.
var allowPrivileged atomic.Bool

func init() { allowPrivileged.Store(true) }

// AllowPrivileged sets whether pod specs may ask for privileged containers
// (kube-apiserver's --allow-privileged), for the whole process.
func AllowPrivileged(allow bool) { allowPrivileged.Store(allow) }

// ValidatePodSpec checks the parts of a pod spec a test control plane can
// judge without a kubelet, as upstream's validatePodSpec and in its order:
// volumes' names, then containers (names, images, ports, volume mounts,
// requests within limits, privilege, host ports), init and ephemeral ones,
// policies, DNS, host aliases.
func ValidatePodSpec(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	volumes, errs := validateVolumeNames(spec.Volumes, p.Child("volumes"))
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := sets.New[string]()
	for _, group := range []struct {
		name       string
		containers []corev1.Container
	}{{"containers", spec.Containers}, {"initContainers", spec.InitContainers}} {
		for i, c := range group.containers {
			cp := p.Child(group.name).Index(i)
			switch {
			case c.Name == "":
				errs = append(errs, field.Required(cp.Child("name"), ""))
			case names.Has(c.Name):
				errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
			default:
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
				}
			}
			names.Insert(c.Name)
			if group.name == "initContainers" { // init containers run one by one
				errs = append(errs, hostPortConflicts([]corev1.Container{c}, p.Child(group.name))...)
			}
			if c.Image == "" {
				errs = append(errs, field.Required(cp.Child("image"), ""))
			}
			errs = append(errs, validatePorts(c.Ports, cp.Child("ports"))...)
			errs = append(errs, validateMounts(c.VolumeMounts, volumes, cp.Child("volumeMounts"))...)
			errs = append(errs, validateRequests(c.Resources, cp.Child("resources", "requests"))...)
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged && !allowPrivileged.Load() {
				errs = append(errs, field.Forbidden(cp.Child("securityContext", "privileged"), "disallowed by cluster policy"))
			}
		}
		if group.name == "containers" {
			errs = append(errs, hostPortConflicts(spec.Containers, p.Child(group.name))...)
		}
	}
	errs = append(errs, validateEphemeralContainers(spec, names, p.Child("ephemeralContainers"))...)
	switch spec.RestartPolicy {
	case "", corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, p.Child("dnsPolicy"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, validateAffinity(spec.Affinity, p.Child("affinity"))...)
	errs = append(errs, validateDNSConfig(spec.DNSConfig, spec.DNSPolicy, p.Child("dnsConfig"))...)
	errs = append(errs, validateSchedulingGates(spec.SchedulingGates, p.Child("schedulingGates"))...)
	if spec.NodeName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(spec.NodeName) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), spec.NodeName, msg))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, "must be between 1 and 2147483647, inclusive"))
	}
	errs = append(errs, validateTolerations(spec.Tolerations, p.Child("tolerations"))...)
	return append(errs, validateHostAliases(spec.HostAliases, p.Child("hostAliases"))...)
}

// ValidateSelectorAndTemplate checks the selector and pod template of a
// controller's spec (at specPath) as upstream's apps validation does:
// ValidateSelector, then the template's pod spec.
func ValidateSelectorAndTemplate(selector *metav1.LabelSelector, template *corev1.PodTemplateSpec, specPath *field.Path) field.ErrorList {
	errs := ValidateSelector(selector, template, specPath)
	return append(errs, ValidatePodSpec(&template.Spec, specPath.Child("template", "spec"))...)
}

// ValidateSelector checks a controller's selector against its template's
// labels, as upstream's apps and batch validation do: the labels valid, a
// selector required and not empty, and matching them.
func ValidateSelector(selector *metav1.LabelSelector, template *corev1.PodTemplateSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	selectorPath, labelsPath := specPath.Child("selector"), specPath.Child("template", "metadata", "labels")
	errs = append(errs, metav1validation.ValidateLabels(template.Labels, labelsPath)...)
	switch {
	case selector == nil:
		errs = append(errs, field.Required(selectorPath, ""))
	case len(selector.MatchLabels)+len(selector.MatchExpressions) == 0:
		errs = append(errs, field.Invalid(selectorPath, selector, "empty selector is invalid for deployment"))
	default:
		errs = append(errs, metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, selectorPath)...)
		if s, err := metav1.LabelSelectorAsSelector(selector); err == nil && !s.Matches(labels.Set(template.Labels)) {
			errs = append(errs, field.Invalid(labelsPath, template.Labels, "`selector` does not match template `labels`"))
		}
	}
	return errs
}

// allowedEphemeralContainerFields are the fields an ephemeral container may
// set: upstream's allow list, so that a field added to the API is refused
// until it is considered.
var allowedEphemeralContainerFields = sets.New("Name", "Image", "Command", "Args", "WorkingDir", "EnvFrom", "Env",
	"VolumeMounts", "VolumeDevices", "TerminationMessagePath", "TerminationMessagePolicy", "ImagePullPolicy",
	"SecurityContext", "Stdin", "StdinOnce", "TTY")

// validateEphemeralContainers checks a pod's ephemeral containers as
// upstream's validateEphemeralContainers does: a name unique across all
// the pod's containers (others holds the init and regular ones' names), an
// image, a target among the other containers, nothing outside the allow
// list, and no volume subpaths.
func validateEphemeralContainers(spec *corev1.PodSpec, others sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := others.Clone()
	for i, ec := range spec.EphemeralContainers {
		ip := p.Index(i)
		if ec.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Label(ec.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), ec.Name, msg))
			}
		}
		if ec.Image == "" {
			errs = append(errs, field.Required(ip.Child("image"), ""))
		}
		if names.Has(ec.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), ec.Name))
		} else {
			names.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(ip.Child("targetContainerName"), ec.TargetContainerName))
		}
		errs = append(errs, notAllowed(ec.EphemeralContainerCommon, ip)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// notAllowed reports each field of c set outside
// allowedEphemeralContainerFields, as upstream's validateFieldAllowList.
func notAllowed(c corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	t, v := reflect.TypeOf(c), reflect.ValueOf(c)
	for i := range t.NumField() {
		if f := t.Field(i); !allowedEphemeralContainerFields.Has(f.Name) && !v.Field(i).IsZero() {
			r, n := utf8.DecodeRuneInString(f.Name)
			errs = append(errs, field.Forbidden(p.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set for an Ephemeral Container"))
		}
	}
	return errs
}

// validateVolumeNames checks volumes' names as upstream's ValidateVolumes,
// and returns those of the valid ones.
func validateVolumeNames(volumes []corev1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range volumes {
		np := p.Index(i).Child("name")
		var el field.ErrorList
		if v.Name == "" {
			el = append(el, field.Required(np, ""))
		} else {
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				el = append(el, field.Invalid(np, v.Name, msg))
			}
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(np, v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
		}
		errs = append(errs, el...)
	}
	return names, errs
}

var portProtocols = sets.New(corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)

// validatePorts is upstream's validateContainerPorts.
func validatePorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), port.HostPort, msg))
			}
		}
		if port.Protocol == "" {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !portProtocols.Has(port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), port.Protocol, sets.List(portProtocols)))
		}
	}
	return errs
}

// validateMounts checks volume mounts as upstream's ValidateVolumeMounts
// does: a volume of the pod's, a path, each path once.
func validateMounts(mounts []corev1.VolumeMount, volumes sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if !volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if paths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
	}
	return errs
}

// validateRequests checks each request against its limit, as upstream's
// ValidateContainerResourceRequirements: at most the limit, or equal to it
// for a resource that cannot be overcommitted (huge pages, extended
// resources).
func validateRequests(r corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		request := r.Requests[name]
		limit, ok := r.Limits[name]
		switch {
		case !ok:
		case request.Cmp(limit) != 0 && !resourcequota.IsOvercommitAllowed(name):
			errs = append(errs, field.Invalid(p, request.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case request.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(p, request.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}
