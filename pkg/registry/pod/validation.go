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
	"reflect"
	"slices"
	"strings"
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

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
)

// allowPrivileged is kube-apiserver's --allow-privileged: process-wide,
// as upstream's (its capabilities package), true unless the
// kube-apiserver persona is told otherwise.
var allowPrivileged atomic.Bool

func init() { allowPrivileged.Store(true) }

// AllowPrivileged sets whether pod specs may ask for privileged containers
// (kube-apiserver's --allow-privileged), for the whole process.
func AllowPrivileged(allow bool) { allowPrivileged.Store(allow) }

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

// validateEphemeralContainers is upstream's: each valid as any container
// is, its image unpadded, named unlike any other container, its target
// among the others, nothing outside the allow list, and no volume
// subpaths.
func validateEphemeralContainers(spec *corev1.PodSpec, volumes volumeSources, claims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	others := containerNames(spec)
	names := others.Clone()
	for i := range spec.EphemeralContainers {
		ec, ip := &spec.EphemeralContainers[i], p.Index(i)
		errs = append(errs, validateContainerCommon((*corev1.Container)(&ec.EphemeralContainerCommon), volumes, claims, ip, podHostUsers(spec))...)
		if strings.TrimSpace(ec.Image) != ec.Image {
			errs = append(errs, field.Invalid(ip.Child("image"), ec.Image, "must not have leading or trailing whitespace"))
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

// volumeSources are a pod's valid volumes by name.
type volumeSources map[string]corev1.VolumeSource

// validateMounts is upstream's ValidateVolumeMounts of c's: each of a
// volume of the pod, at a path of its own, apart from c's devices; its
// subpaths, propagation (Bidirectional only for a privileged container),
// recursive read-only and bind mount options valid. Some paths are the
// list's, as upstream's.
func validateMounts(c *corev1.Container, volumes volumeSources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := sets.New[string]()
	for i, m := range c.VolumeMounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if _, ok := volumes[m.Name]; !ok {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if paths.Has(m.MountPath) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
		if slices.ContainsFunc(c.VolumeDevices, func(d corev1.VolumeDevice) bool { return d.Name == m.Name }) {
			errs = append(errs, field.Invalid(ip.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		if slices.ContainsFunc(c.VolumeDevices, func(d corev1.VolumeDevice) bool { return d.DevicePath == m.MountPath }) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
		}
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, p.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, p.Child("subPathExpr"))...)
		}
		if mp := m.MountPropagation; mp != nil {
			if !slices.Contains(mountPropagations, *mp) {
				errs = append(errs, field.NotSupported(p.Child("mountPropagation"), *mp, mountPropagations))
			}
			if sc := c.SecurityContext; *mp == corev1.MountPropagationBidirectional && (sc == nil || sc.Privileged == nil || !*sc.Privileged) {
				errs = append(errs, field.Forbidden(p.Child("mountPropagation"), "Bidirectional mount propagation is available only to privileged containers"))
			}
		}
		errs = append(errs, validateMountRecursiveReadOnly(m, p.Child("recursiveReadOnly"))...)
		errs = append(errs, validateBindMountOptions(m.BindMountOptions, ip.Child("bindMountOptions"))...)
		if v, ok := volumes[m.Name]; ok && len(m.BindMountOptions) > 0 && v.Image != nil {
			errs = append(errs, field.Invalid(ip.Child("bindMountOptions"), m.BindMountOptions, "bindMountOptions may not be used with image volumes"))
		}
	}
	return errs
}

// validateDevices is upstream's ValidateVolumeDevices of c's: each of a
// claim or ephemeral volume of the pod, named once, at a path of its own
// without backsteps, apart from c's mounts.
func validateDevices(c *corev1.Container, volumes volumeSources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, paths := sets.New[string](), sets.New[string]()
	for i, d := range c.VolumeDevices {
		ip := p.Index(i)
		v, found := volumes[d.Name]
		if d.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must be unique"))
		}
		switch {
		case !found:
			errs = append(errs, field.NotFound(ip.Child("name"), d.Name))
		case v.PersistentVolumeClaim == nil && v.Ephemeral == nil:
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(ip.Child("devicePath"), ""))
		}
		if paths.Has(d.DevicePath) {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && len(volume.PathNoBacksteps(d.DevicePath, p)) > 0 {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths.Insert(d.DevicePath)
		}
		if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == d.Name }) {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		if slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == d.DevicePath }) {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
		}
		if d.Name != "" {
			names.Insert(d.Name)
		}
	}
	return errs
}
