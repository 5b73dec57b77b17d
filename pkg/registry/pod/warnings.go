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
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
)

// The warnings kube-apiserver sends (as Warning headers) for a pod or a
// pod template: a port of k8s.io/kubernetes' pkg/api/pod/warnings.go to
// the v1 types. Where upstream ranges over a map, the keys are sorted.

// Warnings returns the warnings of a pod's create: upstream warns on
// nothing else of a pod (an update, a status, a subresource).
func Warnings(p *corev1.Pod) []string {
	var warnings []string
	if msgs := validation.IsDNS1123Label(p.Name); len(msgs) != 0 {
		warnings = append(warnings, fmt.Sprintf("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", msgs))
	}
	return append(warnings, warningsForSpecAndMeta(nil, &p.Spec, &p.ObjectMeta)...)
}

// statusWarnings returns the warnings of a pod's status update: IPs in
// forms kube-apiserver deprecates.
func statusWarnings(status *corev1.PodStatus) []string {
	var warnings []string
	for i, ip := range status.PodIPs {
		warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "podIPs").Index(i).Child("ip"), ip.IP)...)
	}
	for i, ip := range status.HostIPs {
		warnings = append(warnings, validation.GetWarningsForIP(field.NewPath("status", "hostIPs").Index(i).Child("ip"), ip.IP)...)
	}
	return warnings
}

// TemplateWarnings returns the warnings of the pod template at path.
func TemplateWarnings(path *field.Path, t *corev1.PodTemplateSpec) []string {
	if t == nil {
		return nil
	}
	return warningsForSpecAndMeta(path, &t.Spec, &t.ObjectMeta)
}

// NameWarnings returns the warning kube-apiserver gives a workload (a
// Deployment, ReplicaSet, ReplicationController, Job or CronJob) whose
// name is not a DNS label.
func NameWarnings(name string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) != 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}

var deprecatedAnnotations = []struct{ key, message string }{
	{`scheduler.alpha.kubernetes.io/critical-pod`, `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{`security.alpha.kubernetes.io/sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
	{`security.alpha.kubernetes.io/unsafe-sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
}

// deprecatedVolumes are the volume plugins upstream warns of. A volume
// has exactly one plugin, so their order does not matter.
var deprecatedVolumes = []struct {
	field, message string
	set            func(v *corev1.Volume) bool
}{
	{"photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+", func(v *corev1.Volume) bool { return v.PhotonPersistentDisk != nil }},
	{"gitRepo", "deprecated in v1.11, and disabled by default in v1.33+", func(v *corev1.Volume) bool { return v.GitRepo != nil }},
	{"scaleIO", "deprecated in v1.16, non-functional in v1.22+", func(v *corev1.Volume) bool { return v.ScaleIO != nil }},
	{"flocker", "deprecated in v1.22, non-functional in v1.25+", func(v *corev1.Volume) bool { return v.Flocker != nil }},
	{"storageOS", "deprecated in v1.22, non-functional in v1.25+", func(v *corev1.Volume) bool { return v.StorageOS != nil }},
	{"quobyte", "deprecated in v1.22, non-functional in v1.25+", func(v *corev1.Volume) bool { return v.Quobyte != nil }},
	{"glusterfs", "deprecated in v1.25, non-functional in v1.26+", func(v *corev1.Volume) bool { return v.Glusterfs != nil }},
	{"cephfs", "deprecated in v1.28, non-functional in v1.31+", func(v *corev1.Volume) bool { return v.CephFS != nil }},
	{"rbd", "deprecated in v1.28, non-functional in v1.31+", func(v *corev1.Volume) bool { return v.RBD != nil }},
}

func warningsForSpecAndMeta(path *field.Path, spec *corev1.PodSpec, meta *metav1.ObjectMeta) []string {
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	specPath, annotations := path.Child("spec"), path.Child("metadata", "annotations")

	for _, k := range slices.Sorted(maps.Keys(spec.NodeSelector)) {
		if msg, ok := node.DeprecatedLabel(k); ok {
			warn("%s: %s", specPath.Child("nodeSelector").Key(k), msg)
		}
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		n := spec.Affinity.NodeAffinity
		if n.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			termsPath := specPath.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			for i, term := range n.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				warnings = append(warnings, node.SelectorTermWarnings(term, false, termsPath.Index(i))...)
			}
		}
		preferredPath := specPath.Child("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
		for i, term := range n.PreferredDuringSchedulingIgnoredDuringExecution {
			warnings = append(warnings, node.SelectorTermWarnings(term.Preference, true, preferredPath.Index(i).Child("preference"))...)
		}
	}
	for i, t := range spec.TopologySpreadConstraints {
		p := specPath.Child("topologySpreadConstraints").Index(i)
		if msg, ok := node.DeprecatedLabel(t.TopologyKey); ok {
			warn("%s: %s is %s", p.Child("topologyKey"), t.TopologyKey, msg)
		}
		if t.LabelSelector == nil {
			warn("%s: a null labelSelector results in matching no pod", p.Child("labelSelector"))
		}
	}
	for _, d := range deprecatedAnnotations {
		if hasKey(meta.Annotations, d.key) {
			warn("%s: %s", annotations.Key(d.key), d.message)
		}
	}

	for i := range spec.Volumes {
		v, p := &spec.Volumes[i], specPath.Child("volumes").Index(i)
		for _, d := range deprecatedVolumes {
			if d.set(v) {
				warn("%s: %s", p.Child(d.field), d.message)
			}
		}
		if v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
			warnings = append(warnings, persistentvolumeclaim.SpecWarnings(p.Child("ephemeral", "volumeClaimTemplate", "spec"), &v.Ephemeral.VolumeClaimTemplate.Spec)...)
		}
	}
	warnings = append(warnings, overlappingPathWarnings(spec.Volumes)...)

	warnings = append(warnings, duplicateWarnings(spec.HostAliases, specPath.Child("hostAliases"), "ip", "duplicate ip %q",
		func(a corev1.HostAlias) string { return a.IP })...)
	warnings = append(warnings, duplicateWarnings(spec.ImagePullSecrets, specPath.Child("imagePullSecrets"), "name", "duplicate name %q",
		func(s corev1.LocalObjectReference) string { return s.Name })...)
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			warn("%s: invalid empty name %q", specPath.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
		}
	}

	for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		warnings = append(warnings, fractionalWarnings(spec.Overhead, name, specPath.Child("overhead"))...)
	}
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if hasKey(meta.Annotations, corev1.SeccompPodAnnotationKey) {
			warn(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(corev1.SeccompPodAnnotationKey))
		}
	}
	var podAppArmor *corev1.AppArmorProfile
	if spec.SecurityContext != nil {
		podAppArmor = spec.SecurityContext.AppArmorProfile
	}

	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			if key := corev1.SeccompContainerAnnotationKeyPrefix + c.Name; hasKey(meta.Annotations, key) {
				warn(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(key))
			}
		}
		// A pod's AppArmor annotations upstream warns of as it copies them to
		// the fields (applyAppArmorVersionSkew); a template's, here.
		if path != nil && (c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil) {
			key := corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + c.Name
			if value, ok := meta.Annotations[key]; ok && (podAppArmor == nil || !apiequality.Semantic.DeepEqual(podAppArmor, appArmorProfileOf(value))) {
				warn(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, annotations.Key(key))
			}
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			warnings = append(warnings, fractionalWarnings(c.Resources.Limits, name, p.Child("resources", "limits"))...)
			warnings = append(warnings, fractionalWarnings(c.Resources.Requests, name, p.Child("resources", "requests"))...)
		}
		warnings = append(warnings, envWarnings(c.Env, p.Child("env"))...)
	})
	warnings = append(warnings, portWarnings(spec, specPath)...)

	if s := spec.TerminationGracePeriodSeconds; s != nil && *s < 0 {
		warn("%s: must be >= 0; negative values are invalid and will be treated as 1", specPath.Child("terminationGracePeriodSeconds"))
	}
	if spec.Affinity != nil {
		for _, a := range []struct {
			name     string
			affinity *corev1.PodAffinity
		}{{"podAffinity", spec.Affinity.PodAffinity}, {"podAntiAffinity", (*corev1.PodAffinity)(spec.Affinity.PodAntiAffinity)}} {
			if a.affinity == nil {
				continue
			}
			p := specPath.Child("affinity", a.name)
			for i, t := range a.affinity.RequiredDuringSchedulingIgnoredDuringExecution {
				if t.LabelSelector == nil {
					warn("%s: a null labelSelector results in matching no pod", p.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i).Child("labelSelector"))
				}
			}
			for i, t := range a.affinity.PreferredDuringSchedulingIgnoredDuringExecution {
				if t.PodAffinityTerm.LabelSelector == nil {
					warn("%s: a null labelSelector results in matching no pod", p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm", "labelSelector"))
				}
			}
		}
	}
	if spec.DNSConfig != nil {
		for i, ns := range spec.DNSConfig.Nameservers {
			warnings = append(warnings, validation.GetWarningsForIP(specPath.Child("dnsConfig", "nameservers").Index(i), ns)...)
		}
	}
	for i, a := range spec.HostAliases {
		warnings = append(warnings, validation.GetWarningsForIP(specPath.Child("hostAliases").Index(i).Child("ip"), a.IP)...)
	}
	return warnings
}
