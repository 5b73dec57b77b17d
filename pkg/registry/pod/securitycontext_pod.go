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
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/node/util/sysctl"
)

// validatePodSecurityContext is upstream's validatePodSpecSecurityContext
// of spec's security context (at p): user and group IDs in range, valid
// sysctls, a known fsGroupChangePolicy, valid seccomp and AppArmor
// profiles and Windows options, a known supplementalGroupsPolicy and
// seLinuxChangePolicy.
func validatePodSecurityContext(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		errs = append(errs, validateGroupID(*sc.FSGroup, p.Child("fsGroup"))...)
	}
	if sc.RunAsUser != nil {
		errs = append(errs, validateUserID(*sc.RunAsUser, p.Child("runAsUser"))...)
	}
	if sc.RunAsGroup != nil {
		errs = append(errs, validateGroupID(*sc.RunAsGroup, p.Child("runAsGroup"))...)
	}
	for i, gid := range sc.SupplementalGroups {
		errs = append(errs, validateGroupID(gid, p.Child("supplementalGroups").Index(i))...)
	}
	errs = append(errs, validateSysctls(spec, p.Child("sysctls"))...)
	if sc.FSGroupChangePolicy != nil && !validFSGroupChangePolicies.Has(*sc.FSGroupChangePolicy) {
		errs = append(errs, field.NotSupported(p.Child("fsGroupChangePolicy"), sc.FSGroupChangePolicy, sets.List(validFSGroupChangePolicies)))
	}
	errs = append(errs, validateSeccompProfileField(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, validateWindowsOptions(sc.WindowsOptions, p.Child("windowsOptions"))...)
	errs = append(errs, validateAppArmorProfileField(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	if sc.SupplementalGroupsPolicy != nil && !validSupplementalGroupsPolicies.Has(*sc.SupplementalGroupsPolicy) {
		errs = append(errs, field.NotSupported(p.Child("supplementalGroupsPolicy"), sc.SupplementalGroupsPolicy, sets.List(validSupplementalGroupsPolicies)))
	}
	// Upstream allows only Recursive while its SELinuxMount gate is off;
	// 1.37 turns it on, so both policies are allowed.
	if sc.SELinuxChangePolicy != nil && !validSELinuxChangePolicies.Has(*sc.SELinuxChangePolicy) {
		errs = append(errs, field.NotSupported(p.Child("seLinuxChangePolicy"), *sc.SELinuxChangePolicy, sets.List(validSELinuxChangePolicies)))
	}
	return errs
}

// The policies upstream knows.
var (
	validFSGroupChangePolicies      = sets.New(corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways)
	validSupplementalGroupsPolicies = sets.New(corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict)
	validSELinuxChangePolicies      = sets.New(corev1.SELinuxChangePolicyRecursive, corev1.SELinuxChangePolicyMountOption)
)

// Upstream's sysctl names: segments joined by dots or slashes, at most
// sysctlMaxLength characters.
const (
	sysctlSegmentFmt      = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlContainSlashFmt = "(" + sysctlSegmentFmt + "[\\./])*" + sysctlSegmentFmt
	sysctlMaxLength       = 253
)

var sysctlContainSlashRegexp = regexp.MustCompile("^" + sysctlContainSlashFmt + "$")

// validateSysctls is upstream's: each sysctl named, validly and once, and
// not in a namespace the pod shares with the host. Upstream lets an
// update keep such a sysctl the old pod had; the old pod is not known
// here, so it is refused as on create.
func validateSysctls(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, s := range spec.SecurityContext.Sysctls {
		np := p.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(np, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlContainSlashRegexp.MatchString(s.Name):
			errs = append(errs, field.Invalid(np, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlContainSlashRegexp)))
		case names.Has(s.Name):
			errs = append(errs, field.Duplicate(np, s.Name))
		}
		if err := validateHostSysctl(s.Name, spec, np); err != nil {
			errs = append(errs, err)
		}
		names.Insert(s.Name)
	}
	return errs
}

// validateHostSysctl is upstream's ValidateHostSysctl: no network sysctl
// with hostNetwork, no IPC one with hostIPC.
func validateHostSysctl(name string, spec *corev1.PodSpec, p *field.Path) *field.Error {
	ns, _, _ := sysctl.GetNamespace(name)
	switch {
	case spec.HostNetwork && ns == sysctl.NetNamespace:
		return field.Invalid(p, name, "may not be specified when 'hostNetwork' is true")
	case spec.HostIPC && ns == sysctl.IPCNamespace:
		return field.Invalid(p, name, "may not be specified when 'hostIPC' is true")
	}
	return nil
}

// validateShareProcessNamespace is upstream's: not with hostPID. p is the
// spec's path.
func validateShareProcessNamespace(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	if spec.ShareProcessNamespace != nil && spec.HostPID && *spec.ShareProcessNamespace {
		return field.ErrorList{field.Invalid(p.Child("shareProcessNamespace"), *spec.ShareProcessNamespace, "ShareProcessNamespace and HostPID cannot both be enabled")}
	}
	return nil
}

// validateHostUsers is upstream's: a pod with its own user namespace
// (hostUsers false) shares no other namespace with the host and has no
// volume devices. p is the spec's path; upstream's capitalized HostPID
// and HostIPC are kept. Upstream lets an update keep hostNetwork or
// volume devices the old pod had (and allows hostNetwork with its
// UserNamespacesHostNetworkSupport gate, off in 1.37); the old pod is not
// known here, so they are refused as on create.
func validateHostUsers(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var errs field.ErrorList
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(p.Child("hostNetwork"), "when `hostUsers` is false"))
	}
	if spec.HostPID {
		errs = append(errs, field.Forbidden(p.Child("HostPID"), "when `hostUsers` is false"))
	}
	if spec.HostIPC {
		errs = append(errs, field.Forbidden(p.Child("HostIPC"), "when `hostUsers` is false"))
	}
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		if len(c.VolumeDevices) > 0 {
			errs = append(errs, field.Forbidden(cp.Child("volumeDevices"), "when `hostUsers` is false"))
		}
	})
	return errs
}

// validateWindowsHostProcessPod is upstream's: a container's hostProcess,
// where both set it, the pod's; if any container is a HostProcess one
// (set or from the pod), all are, the pod has hostNetwork, and
// kube-apiserver allows privileged containers. p is the spec's path.
func validateWindowsHostProcessPod(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var podHostProcess *bool
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil {
		podHostProcess = spec.SecurityContext.WindowsOptions.HostProcess
	}
	var errs field.ErrorList
	containers, hostProcessContainers := 0, 0
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		containers++
		var hostProcess *bool
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			hostProcess = c.SecurityContext.WindowsOptions.HostProcess
		}
		if podHostProcess != nil && hostProcess != nil && *podHostProcess != *hostProcess {
			errs = append(errs, field.Invalid(cp.Child("securityContext", "windowsOptions", "hostProcess"), *hostProcess,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podHostProcess)))
		}
		if hostProcess != nil && *hostProcess || hostProcess == nil && podHostProcess != nil && *podHostProcess {
			hostProcessContainers++
		}
	})
	if hostProcessContainers == 0 {
		return errs
	}
	if hostProcessContainers != containers {
		errs = append(errs, field.Invalid(p, "", "If pod contains any hostProcess containers then all containers must be HostProcess containers"))
	}
	if !spec.HostNetwork {
		errs = append(errs, field.Invalid(p.Child("hostNetwork"), spec.HostNetwork, "hostNetwork must be true if pod contains any hostProcess containers"))
	}
	if !allowPrivileged.Load() {
		errs = append(errs, field.Forbidden(p, "hostProcess containers are disallowed by cluster policy"))
	}
	return errs
}

// podHostUsers is upstream's hostUsers of a pod spec: whether its
// containers share the host's user namespace (hostUsers unset or true).
func podHostUsers(spec *corev1.PodSpec) bool {
	return spec.HostUsers == nil || *spec.HostUsers
}

// validateLinux is upstream's: no Windows options on a Linux pod.
func validateLinux(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	const notLinux = "windows options cannot be set for a linux pod"
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		errs = append(errs, field.Forbidden(p.Child("securityContext", "windowsOptions"), notLinux))
	}
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			errs = append(errs, field.Forbidden(cp.Child("securityContext", "windowsOptions"), notLinux))
		}
	})
	return errs
}

// validateWindows is upstream's: none of the Linux-only fields of the
// pod's and containers' security contexts, nor host namespaces, on a
// Windows pod.
func validateWindows(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, fp *field.Path) {
		if set {
			errs = append(errs, field.Forbidden(fp, "cannot be set for a windows pod"))
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		sp := p.Child("securityContext")
		forbid(sc.AppArmorProfile != nil, sp.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, sp.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, sp.Child("seccompProfile"))
		forbid(sc.FSGroup != nil, sp.Child("fsGroup"))
		forbid(sc.FSGroupChangePolicy != nil, sp.Child("fsGroupChangePolicy"))
		forbid(len(sc.Sysctls) > 0, sp.Child("sysctls"))
		forbid(sc.RunAsUser != nil, sp.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, sp.Child("runAsGroup"))
		forbid(sc.SupplementalGroups != nil, sp.Child("supplementalGroups"))
		forbid(sc.SupplementalGroupsPolicy != nil, sp.Child("supplementalGroupsPolicy"))
		forbid(sc.SELinuxChangePolicy != nil, sp.Child("seLinuxChangePolicy"))
	}
	forbid(spec.HostUsers != nil, p.Child("hostUsers"))
	forbid(spec.HostPID, p.Child("hostPID"))
	forbid(spec.HostIPC, p.Child("hostIPC"))
	forbid(spec.ShareProcessNamespace != nil, p.Child("shareProcessNamespace"))
	visitContainers(spec, p, func(c *corev1.Container, cp *field.Path) {
		sc := c.SecurityContext
		if sc == nil {
			return
		}
		sp := cp.Child("securityContext")
		forbid(sc.AppArmorProfile != nil, sp.Child("appArmorProfile"))
		forbid(sc.SELinuxOptions != nil, sp.Child("seLinuxOptions"))
		forbid(sc.SeccompProfile != nil, sp.Child("seccompProfile"))
		forbid(sc.Capabilities != nil, sp.Child("capabilities"))
		forbid(sc.ReadOnlyRootFilesystem != nil, sp.Child("readOnlyRootFilesystem"))
		forbid(sc.Privileged != nil, sp.Child("privileged"))
		forbid(sc.AllowPrivilegeEscalation != nil, sp.Child("allowPrivilegeEscalation"))
		forbid(sc.ProcMount != nil, sp.Child("procMount"))
		forbid(sc.RunAsUser != nil, sp.Child("runAsUser"))
		forbid(sc.RunAsGroup != nil, sp.Child("runAsGroup"))
	})
	return errs
}
