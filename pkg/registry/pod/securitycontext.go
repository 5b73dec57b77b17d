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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// validateSecurityContext is upstream's ValidateSecurityContext of a
// container's: privileged only if kube-apiserver allows it, user and group
// IDs in range, a known procMount (Unmasked only where hostUsers is
// false), valid seccomp and AppArmor profiles and Windows options, and
// allowPrivilegeEscalation false neither with privileged nor with
// CAP_SYS_ADMIN. Upstream lets an update keep CAP_SYS_ADMIN that the old
// pod had; the old pod is not known here, so it is refused as on create.
func validateSecurityContext(sc *corev1.SecurityContext, p *field.Path, hostUsers bool) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.Privileged != nil && *sc.Privileged && !allowPrivileged.Load() {
		errs = append(errs, field.Forbidden(p.Child("privileged"), "disallowed by cluster policy"))
	}
	if sc.RunAsUser != nil {
		errs = append(errs, validateUserID(*sc.RunAsUser, p.Child("runAsUser"))...)
	}
	if sc.RunAsGroup != nil {
		errs = append(errs, validateGroupID(*sc.RunAsGroup, p.Child("runAsGroup"))...)
	}
	errs = append(errs, validateProcMount(sc.ProcMount, hostUsers, p.Child("procMount"))...)
	errs = append(errs, validateSeccompProfileField(sc.SeccompProfile, p.Child("seccompProfile"))...)
	errs = append(errs, validatePrivilegeEscalation(sc, p)...)
	errs = append(errs, validateWindowsOptions(sc.WindowsOptions, p.Child("windowsOptions"))...)
	return append(errs, validateAppArmorProfileField(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
}

// validateUserID is upstream's check of a user ID with IsValidUserID.
func validateUserID(id int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidUserID(id) {
		errs = append(errs, field.Invalid(p, id, msg))
	}
	return errs
}

// validateGroupID is upstream's check of a group ID with IsValidGroupID.
func validateGroupID(id int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidGroupID(id) {
		errs = append(errs, field.Invalid(p, id, msg))
	}
	return errs
}

// validateProcMount is upstream's ValidateProcMountType, and its
// ValidateSecurityContext's refusal of Unmasked where the pod shares the
// host's user namespace.
func validateProcMount(pm *corev1.ProcMountType, hostUsers bool, p *field.Path) field.ErrorList {
	if pm == nil {
		return nil
	}
	var errs field.ErrorList
	switch *pm {
	case corev1.DefaultProcMount, corev1.UnmaskedProcMount:
	default:
		errs = append(errs, field.NotSupported(p, *pm, []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
	}
	if hostUsers && *pm == corev1.UnmaskedProcMount {
		errs = append(errs, field.Invalid(p, pm, "`hostUsers` must be false to use `Unmasked`"))
	}
	return errs
}

// validatePrivilegeEscalation is the part of upstream's
// ValidateSecurityContext about allowPrivilegeEscalation false: neither
// privileged nor CAP_SYS_ADMIN added (an error for each time it is).
func validatePrivilegeEscalation(sc *corev1.SecurityContext, p *field.Path) field.ErrorList {
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		return nil
	}
	var errs field.ErrorList
	if sc.Privileged != nil && *sc.Privileged {
		errs = append(errs, field.Invalid(p, registry.Internal(sc), "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
	}
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			if c == "CAP_SYS_ADMIN" {
				errs = append(errs, field.Invalid(p, registry.Internal(sc), "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
			}
		}
	}
	return errs
}

// validateSeccompProfileField is upstream's: a known type; a Localhost
// profile's path relative and without "..", no such path for other
// types.
func validateSeccompProfileField(sp *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), sp.Type,
			[]corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	switch {
	case sp.Type != corev1.SeccompProfileTypeLocalhost:
		if sp.LocalhostProfile != nil {
			errs = append(errs, field.Invalid(p.Child("localhostProfile"), registry.Internal(sp), "can only be set when seccomp type is Localhost"))
		}
	case sp.LocalhostProfile == nil:
		errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
	default:
		errs = append(errs, validateLocalDescendingPath(*sp.LocalhostProfile, p.Child("localhostProfile"))...)
	}
	return errs
}

// validateAppArmorProfileField is upstream's ValidateAppArmorProfileField:
// a known type; a Localhost profile's name set, unpadded and at most
// PATH_MAX - 1 long, and set for no other type.
func validateAppArmorProfileField(profile *corev1.AppArmorProfile, p *field.Path) field.ErrorList {
	if profile == nil {
		return nil
	}
	var errs field.ErrorList
	local := p.Child("localhostProfile")
	switch profile.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		if profile.LocalhostProfile == nil {
			return append(errs, field.Required(local, "must be set when AppArmor type is Localhost"))
		}
		name := *profile.LocalhostProfile
		if strings.TrimSpace(name) != name {
			errs = append(errs, field.Invalid(local, name, "must not be padded with whitespace"))
		} else if name == "" {
			errs = append(errs, field.Required(local, "must be set when AppArmor type is Localhost"))
		}
		const maxLocalhostProfileLength = 4095 // PATH_MAX - 1
		if len(name) > maxLocalhostProfileLength {
			errs = append(errs, field.TooLong(local, "", maxLocalhostProfileLength))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if profile.LocalhostProfile != nil {
			errs = append(errs, field.Invalid(local, profile.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when appArmorProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), profile.Type,
			[]corev1.AppArmorProfileType{corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return errs
}

// Limits of upstream's validateWindowsSecurityContextOptions.
const (
	maxGMSACredentialSpecLengthInKiB = 64
	maxGMSACredentialSpecLength      = maxGMSACredentialSpecLengthInKiB * 1024
	maxRunAsUserNameDomainLength     = 256
	maxRunAsUserNameUserLength       = 104
)

// Upstream's patterns for a Windows runAsUserName: no control
// characters; a NetBios or DNS domain; a user of neither only dots and
// spaces nor any of "/\:;|=,+*?<>@[].
var (
	ctrlRegex                      = regexp.MustCompile(`[[:cntrl:]]+`)
	validNetBiosRegex              = regexp.MustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`)
	windowsDNSLabelFormat          = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	validWindowsUserDomainDNSRegex = regexp.MustCompile(fmt.Sprintf(`^%s(?:\.%s)*$`, windowsDNSLabelFormat, windowsDNSLabelFormat))
	invalidUserNameCharsRegex      = regexp.MustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`)
	invalidUserNameDotsSpacesRegex = regexp.MustCompile(`^[\. ]+$`)
)

// validateWindowsOptions is upstream's
// validateWindowsSecurityContextOptions: a GMSA credential spec's name a
// DNS subdomain, the spec itself not empty and at most 64 KiB, and
// runAsUserName as validateRunAsUserName has it.
func validateWindowsOptions(o *corev1.WindowsSecurityContextOptions, p *field.Path) field.ErrorList {
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	if o.GMSACredentialSpecName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*o.GMSACredentialSpecName) {
			errs = append(errs, field.Invalid(p.Child("gmsaCredentialSpecName"), o.GMSACredentialSpecName, msg))
		}
	}
	if o.GMSACredentialSpec != nil {
		if l := len(*o.GMSACredentialSpec); l == 0 {
			errs = append(errs, field.Invalid(p.Child("gmsaCredentialSpec"), o.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if l > maxGMSACredentialSpecLength {
			errs = append(errs, field.Invalid(p.Child("gmsaCredentialSpec"), o.GMSACredentialSpec,
				fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecLengthInKiB)))
		}
	}
	if o.RunAsUserName != nil {
		for _, msg := range runAsUserNameErrors(*o.RunAsUserName) {
			errs = append(errs, field.Invalid(p.Child("runAsUserName"), o.RunAsUserName, msg))
		}
	}
	return errs
}

// runAsUserNameErrors is what upstream's
// validateWindowsSecurityContextOptions says of a runAsUserName, in its
// order: not empty, no control characters, at most one backslash; then
// of DOMAIN\USER (the domain optional) the domain's length and format
// and the user's length and characters.
func runAsUserNameErrors(name string) []string {
	parts := strings.Split(name, "\\")
	switch {
	case name == "":
		return []string{"runAsUserName cannot be an empty string"}
	case ctrlRegex.MatchString(name):
		return []string{"runAsUserName cannot contain control characters"}
	case len(parts) > 2:
		return []string{"runAsUserName cannot contain more than one backslash"}
	}
	var msgs []string
	domain, user := "", parts[0]
	if len(parts) == 2 {
		domain, user = parts[0], parts[1]
	}
	if len(domain) >= maxRunAsUserNameDomainLength {
		msgs = append(msgs, fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength))
	}
	if len(parts) == 2 && !validNetBiosRegex.MatchString(domain) && !validWindowsUserDomainDNSRegex.MatchString(domain) {
		msgs = append(msgs, "runAsUserName's Domain doesn't match the NetBios nor the DNS format")
	}
	if l := len(user); l == 0 {
		msgs = append(msgs, "runAsUserName's User cannot be empty")
	} else if l > maxRunAsUserNameUserLength {
		msgs = append(msgs, fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength))
	}
	if invalidUserNameDotsSpacesRegex.MatchString(user) {
		msgs = append(msgs, "runAsUserName's User cannot contain only periods or spaces")
	}
	if invalidUserNameCharsRegex.MatchString(user) {
		msgs = append(msgs, `runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`)
	}
	return msgs
}
