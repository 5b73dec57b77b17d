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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// The warnings wanted are kube-apiserver 1.37's, as it sent them for the
// same pods.
func TestWarnings(t *testing.T) {
	app := func(p *corev1.Pod) *corev1.Container { return &p.Spec.Containers[0] }
	registrytest.RunMutations(t, "Warnings", validPod, []registrytest.Mutation[*corev1.Pod]{
		{Name: "none", Mutate: func(*corev1.Pod) {}},
		{
			Name:   "a name that is no DNS label",
			Mutate: func(p *corev1.Pod) { p.Name = "web.one" },
			Want:   []string{"metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"},
		},
		{
			Name: "deprecated node labels",
			Mutate: func(p *corev1.Pod) {
				p.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux", "failure-domain.beta.kubernetes.io/zone": "a"}
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: "failure-domain.beta.kubernetes.io/region"}}
			},
			Want: []string{
				`spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
				`spec.nodeSelector[failure-domain.beta.kubernetes.io/zone]: deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
				`spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
				"spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod",
			},
		},
		{
			Name: "a preferred node affinity's invalid value",
			Mutate: func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a b"}}}},
				}}}}
			},
			Want: []string{"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]: a b is invalid, a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
		},
		{
			Name: "deprecated annotations and volumes",
			Mutate: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"scheduler.alpha.kubernetes.io/critical-pod": "", corev1.SeccompPodAnnotationKey: "runtime/default"}
				p.Spec.Volumes = []corev1.Volume{{Name: "git", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "r"}}}}
			},
			Want: []string{
				`metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead`,
				"spec.volumes[0].gitRepo: deprecated in v1.11, and disabled by default in v1.33+",
				`metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead`,
			},
		},
		{
			Name: "overlapping paths",
			Mutate: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{
					{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Items: []corev1.KeyToPath{{Key: "a", Path: "x"}, {Key: "b", Path: "x/y"}}}}},
					{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}},
						{},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "t/"}}}},
					}}}},
				}
			},
			Want: []string{
				`volume "cm" (ConfigMap "c"): overlapping paths: "x/y" with "x"`,
				`volume "proj" (Projected) has no sources provided`,
				`volume "proj" (Projected): overlapping paths: "t" (DownwardAPI) with "t" (ServiceAccountToken)`,
			},
		},
		{
			Name: "duplicates",
			Mutate: func(p *corev1.Pod) {
				p.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1"}, {IP: "10.0.0.1"}, {IP: "2001:DB8::2"}}
				p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "s"}, {Name: "s"}, {}}
				app(p).Env = []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "A", Value: "2"}, {Name: "B", Value: "1"}, {Name: "B", Value: "$(B)x"}}
			},
			Want: []string{
				`spec.hostAliases[1].ip: duplicate ip "10.0.0.1"`,
				`spec.imagePullSecrets[1].name: duplicate name "s"`,
				`spec.imagePullSecrets[2].name: invalid empty name ""`,
				`spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply`,
				`spec.hostAliases[2].ip: IPv6 address "2001:DB8::2" should be in RFC 5952 canonical format ("2001:db8::2")`,
			},
		},
		{
			Name: "fractional bytes",
			Mutate: func(p *corev1.Pod) {
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1500m")}
				app(p).Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("2500m")}
			},
			Want: []string{
				`spec.overhead[memory]: fractional byte value "1500m" is invalid, must be an integer`,
				`spec.containers[0].resources.limits[ephemeral-storage]: fractional byte value "2500m" is invalid, must be an integer`,
			},
		},
		{
			Name: "ports",
			Mutate: func(p *corev1.Pod) {
				p.Spec.InitContainers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
				app(p).Ports = []corev1.ContainerPort{
					{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
					{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP},
					{ContainerPort: 81, HostIP: "1.2.3.4", Protocol: corev1.ProtocolTCP},
				}
				p.Spec.Containers[1].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, HostIP: "1.2.3.4", Protocol: corev1.ProtocolTCP}}
			},
			Want: []string{
				"spec.containers[0].ports[0]: duplicate port definition with spec.initContainers[0].ports[0]",
				"spec.containers[0].ports[1]: overlapping port definition with spec.initContainers[0].ports[0]",
				"spec.containers[0].ports[1]: overlapping port definition with spec.containers[0].ports[0]",
				"spec.containers[0].ports[2]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:81 Protocol:TCP HostIP:1.2.3.4}",
				"spec.containers[1].ports[0]: overlapping port definition with spec.initContainers[0].ports[0]",
				"spec.containers[1].ports[0]: overlapping port definition with spec.containers[0].ports[0]",
				"spec.containers[1].ports[0]: dangerously ambiguous port definition with spec.containers[0].ports[1]",
				`spec.containers[0].ports[0]: duplicate port name "http" with spec.initContainers[0].ports[0], services and probes that select ports by name will use spec.initContainers[0].ports[0]`,
			},
		},
		{
			Name: "pod affinity terms without a selector",
			Mutate: func(p *corev1.Pod) {
				p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "k"}}},
				}}
			},
			Want: []string{"spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod"},
		},
	}, Warnings)
}

func TestTemplateWarnings(t *testing.T) {
	template := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app":     "runtime/default",
			corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "sidecar": "unconfined",
		}},
		Spec: validPod().Spec,
	}
	template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](-5)
	// The pod's profile is the app container's annotation: no warning for it.
	template.Spec.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}}
	want := []string{
		`spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/sidecar]: deprecated since v1.30; use the "appArmorProfile" field instead`,
		"spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
	}
	if diff := cmp.Diff(want, TemplateWarnings(field.NewPath("spec", "template"), template)); diff != "" {
		t.Errorf("TemplateWarnings (-want +got):\n%s", diff)
	}
}

// TestWarningsReachTheClient checks the store sends a pod's warnings on
// create only, and its status's on a status update.
func TestWarningsReachTheClient(t *testing.T) {
	p := newPods(t)
	var create registrytest.Warnings
	pod := modified(validPod(), func(p *corev1.Pod) { p.Name, p.ResourceVersion, p.UID = "web.one", "", "" })
	if _, err := p.store.Create(create.Context("default"), pod, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if len(create.Got) != 1 {
		t.Errorf("Create's warnings: got %q, want the name's", create.Got)
	}

	var update registrytest.Warnings
	changed := modified(pod, func(p *corev1.Pod) { p.Labels = map[string]string{"x": "y"} })
	if _, _, err := p.store.Update(update.Context("default"), pod.Name, rest.DefaultUpdatedObjectInfo(changed),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if update.Got != nil {
		t.Errorf("Update's warnings: got %q, want none (upstream spares a pod's updates)", update.Got)
	}

	var status registrytest.Warnings
	withIPs := modified(changed, func(p *corev1.Pod) {
		p.Status.PodIP, p.Status.PodIPs = "2001:DB8::1", []corev1.PodIP{{IP: "2001:DB8::1"}}
		p.Status.HostIP, p.Status.HostIPs = "2001:DB8::2", []corev1.HostIP{{IP: "2001:DB8::2"}}
	})
	if _, _, err := p.status.Update(status.Context("default"), pod.Name, rest.DefaultUpdatedObjectInfo(withIPs),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status Update: %v", err)
	}
	want := []string{
		`status.podIPs[0].ip: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")`,
		`status.hostIPs[0].ip: IPv6 address "2001:DB8::2" should be in RFC 5952 canonical format ("2001:db8::2")`,
	}
	if diff := cmp.Diff(want, status.Got); diff != "" {
		t.Errorf("status Update's warnings (-want +got):\n%s", diff)
	}
}
