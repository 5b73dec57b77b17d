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
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// ValidatePodSpec is upstream's ValidatePodSpec (k8s.io/kubernetes'
// pkg/apis/core/validation) of a pod template's spec.
func ValidatePodSpec(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	return validatePodSpec(spec, "", p)
}

// validatePodSpec is upstream's ValidatePodSpec, in its order, for what a
// control plane without kubelets can judge (testdata/validation's cases
// compare it with upstream's), of the pod podName ("" for a template).
func validatePodSpec(spec *corev1.PodSpec, podName string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(p.Child("terminationGracePeriodSeconds"), ""))
	}
	volumes, volumeErrs := validateVolumes(spec.Volumes, podName, p.Child("volumes"))
	errs = append(errs, volumeErrs...)
	claims := claimNames(spec)
	errs = append(errs, validateContainers(spec, volumes, claims, p.Child("containers"))...)
	errs = append(errs, validateInitContainers(spec, volumes, claims, p.Child("initContainers"))...)
	errs = append(errs, validateEphemeralContainers(spec, volumes, claims, p.Child("ephemeralContainers"))...)
	errs = append(errs, validatePodResources(spec, claims, p)...)
	errs = append(errs, validateHostNetworkPorts(spec, p.Child("containers"))...)
	switch spec.RestartPolicy {
	case corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	case "":
		errs = append(errs, field.Required(p.Child("restartPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), spec.RestartPolicy,
			[]corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
	}
	errs = append(errs, validateDNSPolicy(spec.DNSPolicy, p.Child("dnsPolicy"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, p.Child("nodeSelector"))...)
	errs = append(errs, validatePodSecurityContext(spec, p.Child("securityContext"))...)
	errs = append(errs, validateShareProcessNamespace(spec, p)...)
	errs = append(errs, validateAffinity(spec.Affinity, p.Child("affinity"))...)
	errs = append(errs, validateDNSConfig(spec.DNSConfig, spec.DNSPolicy, p.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		for _, msg := range validation.IsQualifiedName(string(g.ConditionType)) {
			errs = append(errs, field.Invalid(p.Child("readinessGates").Index(i).Child("conditionType"), string(g.ConditionType), msg))
		}
	}
	errs = append(errs, validateSchedulingGates(spec.SchedulingGates, p.Child("schedulingGates"))...)
	errs = append(errs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, p.Child("topologySpreadConstraints"))...)
	errs = append(errs, validateWindowsHostProcessPod(spec, p)...)
	errs = append(errs, validateHostUsers(spec, p)...)
	errs = append(errs, validateHostnameOverride(spec, p)...)
	if spec.ServiceAccountName != "" {
		for _, msg := range apimachineryvalidation.ValidateServiceAccountName(spec.ServiceAccountName, false) {
			errs = append(errs, field.Invalid(p.Child("serviceAccountName"), spec.ServiceAccountName, msg))
		}
	}
	if sa := spec.DeprecatedServiceAccount; sa != spec.ServiceAccountName { //nolint:staticcheck // kept equal, as upstream
		errs = append(errs, field.Invalid(p.Child("deprecatedServiceAccount"), sa, fmt.Sprintf("must be the same as serviceAccountName: %q", spec.ServiceAccountName)))
	}
	if spec.NodeName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.NodeName, false) {
			errs = append(errs, field.Invalid(p.Child("nodeName"), spec.NodeName, msg))
		}
	}
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	errs = append(errs, dns1123Label(spec.Hostname, p.Child("hostname"))...)
	errs = append(errs, dns1123Label(spec.Subdomain, p.Child("subdomain"))...)
	errs = append(errs, ValidateTolerations(spec.Tolerations, p.Child("tolerations"))...)
	errs = append(errs, validateHostAliases(spec.HostAliases, p.Child("hostAliases"))...)
	if spec.PriorityClassName != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.PriorityClassName, false) {
			errs = append(errs, field.Invalid(p.Child("priorityClassName"), spec.PriorityClassName, msg))
		}
	}
	if spec.RuntimeClassName != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*spec.RuntimeClassName, false) {
			errs = append(errs, field.Invalid(p.Child("runtimeClassName"), *spec.RuntimeClassName, msg))
		}
	}
	if pp := spec.PreemptionPolicy; pp != nil {
		switch *pp {
		case corev1.PreemptLowerPriority, corev1.PreemptNever:
		case "":
			errs = append(errs, field.Required(p.Child("preemptionPolicy"), ""))
		default:
			errs = append(errs, field.NotSupported(p.Child("preemptionPolicy"), pp, []corev1.PreemptionPolicy{corev1.PreemptLowerPriority, corev1.PreemptNever}))
		}
	}
	if spec.Overhead != nil {
		errs = append(errs, ValidateOverhead(spec.Overhead, p.Child("overhead"))...)
	}
	switch os := spec.OS; {
	case os == nil:
	case os.Name == "":
		errs = append(errs, field.Required(p.Child("os", "name"), ""))
	case os.Name == corev1.Linux:
		errs = append(errs, validateLinux(spec, p)...)
	case os.Name == corev1.Windows:
		errs = append(errs, validateWindows(spec, p)...)
	default:
		errs = append(errs, field.NotSupported(p.Child("os"), os.Name, []corev1.OSName{corev1.Linux, corev1.Windows}))
	}
	return append(errs, validateFileKeyRefVolumes(spec, p)...)
}

// validatePodMetadataAndSpec is upstream's of a pod (not a template):
// its annotations (a deletion cost kept invalid if anyCost), its spec, and
// what only pods are held to (a service account for a token volume, a
// grace period not negative, images unpadded).
func validatePodMetadataAndSpec(pod *corev1.Pod, anyCost bool) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateAnnotations(pod.Annotations, &pod.Spec, anyCost, annotationsPath)
	errs = append(errs, validatePodSpec(&pod.Spec, pod.Name, specPath)...)
	if pod.Spec.ServiceAccountName == "" {
		for i, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for j, source := range v.Projected.Sources {
				if source.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(specPath.Child("volumes").Index(i).Child("projected", "sources").Index(j).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(*g, specPath.Child("terminationGracePeriodSeconds"))...)
	}
	errs = append(errs, unpaddedImages(pod.Spec.Containers, specPath.Child("containers"))...)
	return append(errs, unpaddedImages(pod.Spec.InitContainers, specPath.Child("initContainers"))...)
}

// unpaddedImages is upstream's validateContainersOnlyForPod.
func unpaddedImages(containers []corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range containers {
		if strings.TrimSpace(c.Image) != c.Image {
			errs = append(errs, field.Invalid(p.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs
}

// validateHostNetworkPorts is upstream's validatePodHostNetworkDeps: on
// the host's network a host port is its container port (or unset, to be
// defaulted so, as a pod's is when decoded).
func validateHostNetworkPorts(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	for i, c := range spec.Containers {
		for j, port := range c.Ports {
			if port.HostPort != 0 && port.HostPort != port.ContainerPort {
				errs = append(errs, field.Invalid(p.Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return errs
}

// validateHostnameOverride is upstream's validatePodHostName.
func validateHostnameOverride(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	name := spec.HostnameOverride
	if name == nil {
		return nil
	}
	var errs field.ErrorList
	np := p.Child("hostnameOverride")
	if spec.SetHostnameAsFQDN != nil && *spec.SetHostnameAsFQDN {
		errs = append(errs, field.Forbidden(np, "may not be specified when setHostnameAsFQDN is true"))
	}
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(np, "may not be specified when hostNetwork is true"))
	}
	if len(*name) > 64 {
		errs = append(errs, field.TooLong(np, "", 64))
	}
	for _, msg := range validation.IsDNS1123Subdomain(*name) {
		errs = append(errs, field.Invalid(np, *name, msg))
	}
	return errs
}

// dns1123Label is upstream's ValidateDNS1123Label of a field that may be
// empty.
func dns1123Label(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if value != "" {
		for _, msg := range validation.IsDNS1123Label(value) {
			errs = append(errs, field.Invalid(p, value, msg))
		}
	}
	return errs
}

// claimNames are the names of spec's resource claims.
func claimNames(spec *corev1.PodSpec) sets.Set[string] {
	names := sets.New[string]()
	for _, c := range spec.ResourceClaims {
		names.Insert(c.Name)
	}
	return names
}

// containerNames are the names of spec's regular and init containers.
func containerNames(spec *corev1.PodSpec) sets.Set[string] {
	names := sets.New[string]()
	for _, c := range spec.Containers {
		names.Insert(c.Name)
	}
	for _, c := range spec.InitContainers {
		names.Insert(c.Name)
	}
	return names
}

// validateContainers is upstream's: at least one, each valid and named
// once, host ports not shared.
func validateContainers(spec *corev1.PodSpec, volumes volumeSources, claims sets.Set[string], p *field.Path) field.ErrorList {
	if len(spec.Containers) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range spec.Containers {
		c, cp := &spec.Containers[i], p.Index(i)
		errs = append(errs, validateContainerCommon(c, volumes, claims, cp, podHostUsers(spec))...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		errs = append(errs, validateHandlers(c, spec, cp)...)
		errs = append(errs, validateRestartPolicy(c, cp)...)
	}
	return append(errs, hostPortConflicts(spec.Containers, p)...)
}

// validateInitContainers is upstream's: each valid, named unlike any
// other container, its host ports its own; probes and lifecycle only for
// a sidecar (restartPolicy Always).
func validateInitContainers(spec *corev1.PodSpec, volumes volumeSources, claims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for _, c := range spec.Containers {
		names.Insert(c.Name)
	}
	for i := range spec.InitContainers {
		c, cp := &spec.InitContainers[i], p.Index(i)
		errs = append(errs, validateContainerCommon(c, volumes, claims, cp, podHostUsers(spec))...)
		errs = append(errs, validateInitRestartPolicy(c, cp)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
		errs = append(errs, hostPortConflicts([]corev1.Container{*c}, p)...)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			errs = append(errs, validateHandlers(c, spec, cp)...)
			continue
		}
		const notSidecar = "may not be set for init containers without restartPolicy=Always"
		for _, f := range []struct {
			name string
			set  bool
		}{{"lifecycle", c.Lifecycle != nil}, {"livenessProbe", c.LivenessProbe != nil}, {"readinessProbe", c.ReadinessProbe != nil}, {"startupProbe", c.StartupProbe != nil}} {
			if f.set {
				errs = append(errs, field.Forbidden(cp.Child(f.name), notSidecar))
			}
		}
	}
	return errs
}

// validateContainerCommon is upstream's, for every kind of container: a
// name, an image, its termination message policy, ports, environment,
// volume mounts, pull policy, resources and security context.
func validateContainerCommon(c *corev1.Container, volumes volumeSources, claims sets.Set[string], p *field.Path, hostUsers bool) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Label(c.Name, p.Child("name"))...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	errs = append(errs, validatePorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	errs = append(errs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, validateMounts(c, volumes, p.Child("volumeMounts"))...)
	errs = append(errs, validateDevices(c, volumes, p.Child("volumeDevices"))...)
	switch c.ImagePullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	case "":
		errs = append(errs, field.Required(p.Child("imagePullPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
	}
	errs = append(errs, validateResources(&c.Resources, resourcequota.ValidateContainerResourceName, claims, p.Child("resources"))...)
	return append(errs, validateSecurityContext(c.SecurityContext, p.Child("securityContext"), hostUsers)...)
}
