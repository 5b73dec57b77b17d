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

package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestSecretDefaults(t *testing.T) {
	tests := []struct {
		name string
		typ  corev1.SecretType
		want corev1.SecretType
	}{
		{name: "empty type becomes Opaque", typ: "", want: corev1.SecretTypeOpaque},
		{name: "explicit type kept", typ: corev1.SecretTypeTLS, want: corev1.SecretTypeTLS},
		{name: "custom type kept", typ: "example.com/custom", want: "example.com/custom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Secret{Type: tt.typ}
			Scheme.Default(s)
			if s.Type != tt.want {
				t.Errorf("type: got %q, want %q", s.Type, tt.want)
			}
		})
	}
}

func TestNamespaceDefaults(t *testing.T) {
	tests := []struct {
		name       string
		ns         corev1.Namespace
		wantPhase  corev1.NamespacePhase
		wantLabels map[string]string
	}{
		{
			name:       "named: phase Active and the name label",
			ns:         corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
			wantPhase:  corev1.NamespaceActive,
			wantLabels: map[string]string{corev1.LabelMetadataName: "prod"},
		},
		{
			name:       "other labels kept, a wrong name label overwritten",
			ns:         corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"team": "a", corev1.LabelMetadataName: "other"}}},
			wantPhase:  corev1.NamespaceActive,
			wantLabels: map[string]string{"team": "a", corev1.LabelMetadataName: "prod"},
		},
		{
			name:       "generateName without a name: no label",
			ns:         corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tmp-"}},
			wantPhase:  corev1.NamespaceActive,
			wantLabels: nil,
		},
		{
			name:       "explicit phase kept",
			ns:         corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			wantPhase:  corev1.NamespaceTerminating,
			wantLabels: map[string]string{corev1.LabelMetadataName: "old"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.ns.DeepCopy()
			Scheme.Default(ns)
			if ns.Status.Phase != tt.wantPhase {
				t.Errorf("phase: got %q, want %q", ns.Status.Phase, tt.wantPhase)
			}
			if diff := cmp.Diff(tt.wantLabels, ns.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultPod covers what a Pod gets; a template gets the same but
// enableServiceLinks (TestWorkloadTemplatesGetPodSpecDefaultsOnly).
func TestDefaultPod(t *testing.T) {
	defaulted := corev1.PodSpec{
		DNSPolicy:                     corev1.DNSClusterFirst,
		RestartPolicy:                 corev1.RestartPolicyAlways,
		SecurityContext:               &corev1.PodSecurityContext{},
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SchedulerName:                 "default-scheduler",
		EnableServiceLinks:            ptr.To(true),
	}
	explicit := corev1.PodSpec{
		DNSPolicy:                     corev1.DNSDefault,
		RestartPolicy:                 corev1.RestartPolicyNever,
		SecurityContext:               &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		SchedulerName:                 "custom",
		EnableServiceLinks:            ptr.To(false),
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want corev1.PodSpec
	}{
		{name: "empty spec", spec: corev1.PodSpec{}, want: defaulted},
		{name: "explicit values kept", spec: explicit, want: explicit},
		{name: "serviceAccount copied from serviceAccountName", spec: corev1.PodSpec{ServiceAccountName: "sa"},
			want: withServiceAccount(defaulted, "sa")},
		{name: "serviceAccountName from the old alias", spec: corev1.PodSpec{DeprecatedServiceAccount: "old"},
			want: withServiceAccount(defaulted, "old")},
		{name: "serviceAccountName wins over the alias", spec: corev1.PodSpec{ServiceAccountName: "new", DeprecatedServiceAccount: "old"},
			want: withServiceAccount(defaulted, "new")},
		{name: "a negative grace period is 1", spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](-5)},
			want: withGracePeriod(defaulted, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: *tt.spec.DeepCopy()}
			defaultPod(pod)
			if diff := cmp.Diff(tt.want, pod.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodIPAndPodIPsStayInStep: upstream's SetDefaults_PodStatus.
func TestPodIPAndPodIPsStayInStep(t *testing.T) {
	ips := func(ips ...string) []corev1.PodIP {
		var out []corev1.PodIP
		for _, ip := range ips {
			out = append(out, corev1.PodIP{IP: ip})
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		in      corev1.PodStatus
		wantIP  string
		wantIPs []corev1.PodIP
	}{
		{name: "podIP alone", in: corev1.PodStatus{PodIP: "10.0.0.1"}, wantIP: "10.0.0.1", wantIPs: ips("10.0.0.1")},
		{name: "podIPs alone", in: corev1.PodStatus{PodIPs: ips("10.0.0.1", "fd00::1")}, wantIP: "10.0.0.1", wantIPs: ips("10.0.0.1", "fd00::1")},
		{name: "podIP wins", in: corev1.PodStatus{PodIP: "10.0.0.2", PodIPs: ips("10.0.0.1", "fd00::1")}, wantIP: "10.0.0.2", wantIPs: ips("10.0.0.2")},
		{name: "in step", in: corev1.PodStatus{PodIP: "10.0.0.1", PodIPs: ips("10.0.0.1", "fd00::1")}, wantIP: "10.0.0.1", wantIPs: ips("10.0.0.1", "fd00::1")},
		{name: "neither", in: corev1.PodStatus{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: tt.in}
			defaultPod(pod)
			if pod.Status.PodIP != tt.wantIP || !cmp.Equal(pod.Status.PodIPs, tt.wantIPs) {
				t.Errorf("got podIP %q podIPs %v, want %q %v", pod.Status.PodIP, pod.Status.PodIPs, tt.wantIP, tt.wantIPs)
			}
		})
	}
}

func withGracePeriod(spec corev1.PodSpec, seconds int64) corev1.PodSpec {
	spec.TerminationGracePeriodSeconds = ptr.To(seconds)
	return spec
}

func withServiceAccount(spec corev1.PodSpec, name string) corev1.PodSpec {
	spec.ServiceAccountName, spec.DeprecatedServiceAccount = name, name //nolint:staticcheck // the alias is what is tested
	return spec
}

func TestContainerDefaults(t *testing.T) {
	tests := []struct {
		name      string
		container corev1.Container
		want      corev1.Container
	}{
		{
			name:      "untagged image pulls Always",
			container: corev1.Container{Name: "c", Image: "nginx"},
			want: corev1.Container{Name: "c", Image: "nginx", ImagePullPolicy: corev1.PullAlways,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile},
		},
		{
			name:      "explicit values kept",
			container: corev1.Container{Name: "c", Image: "nginx", ImagePullPolicy: corev1.PullNever, TerminationMessagePath: "/tmp/x", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError},
			want:      corev1.Container{Name: "c", Image: "nginx", ImagePullPolicy: corev1.PullNever, TerminationMessagePath: "/tmp/x", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError},
		},
		{
			name:      "port protocol defaults to TCP, explicit UDP kept",
			container: corev1.Container{Name: "c", Image: "dns:1.0", Ports: []corev1.ContainerPort{{ContainerPort: 53}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}},
			want: corev1.Container{Name: "c", Image: "dns:1.0", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				Ports: []corev1.ContainerPort{{ContainerPort: 53, Protocol: corev1.ProtocolTCP}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}},
		},
		{
			name: "limits without requests: requests copied from limits",
			container: corev1.Container{Name: "c", Image: "app:1", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			}},
			want: corev1.Container{Name: "c", Image: "app:1", ImagePullPolicy: corev1.PullIfNotPresent,
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{*tt.container.DeepCopy()}, InitContainers: []corev1.Container{*tt.container.DeepCopy()}}}
			defaultPod(pod)
			spec := &pod.Spec
			if diff := cmp.Diff(tt.want, spec.Containers[0]); diff != "" {
				t.Errorf("container (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, spec.InitContainers[0]); diff != "" {
				t.Errorf("init container (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestsDefaultedFromLimitsAreACopy(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app:1", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}}}}}
	defaultPod(pod)
	res := &pod.Spec.Containers[0].Resources
	res.Requests[corev1.ResourceCPU] = resource.MustParse("2")
	if got := res.Limits[corev1.ResourceCPU]; got.String() != "1" {
		t.Errorf("limit after changing the defaulted request: got %s, want 1", got.String())
	}
}

// TestRequestsDefaultedFromLimitsOneByOne: each limit without a request
// gives its request, as upstream's SetDefaults_Pod.
func TestRequestsDefaultedFromLimitsOneByOne(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app:1", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}}}}}
	defaultPod(pod)
	requests := pod.Spec.Containers[0].Resources.Requests
	if cpu, memory := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]; cpu.String() != "500m" || memory.String() != "1Gi" {
		t.Errorf("requests: got cpu %s, memory %s; want the cpu asked for (500m) and the memory limit (1Gi)", cpu.String(), memory.String())
	}
}

// TestPodDefaultsAsUpstream: the defaults of kube-apiserver 1.37's
// generated defaulters that a pod's probes, hooks, environment and volumes
// get, as a pod created there came back.
func TestPodDefaultsAsUpstream(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		HostNetwork: true,
		Containers: []corev1.Container{{
			Name: "c", Image: "nginx:1.2",
			Ports:          []corev1.ContainerPort{{ContainerPort: 80}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 81}}},
			Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			Env:            []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		}},
		Volumes: []corev1.Volume{
			{Name: "none"},
			{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "n", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
			}}}},
		},
	}}
	defaultPod(pod)
	c := pod.Spec.Containers[0]
	want := corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	if diff := cmp.Diff(want, *c.ReadinessProbe); diff != "" {
		t.Errorf("readiness probe (-want +got):\n%s", diff)
	}
	if s := c.LivenessProbe.GRPC.Service; s == nil || *s != "" {
		t.Errorf("gRPC probe's service: got %v, want \"\"", s)
	}
	if h := c.Lifecycle.PreStop.HTTPGet; h.Path != "/" || h.Scheme != corev1.URISchemeHTTP {
		t.Errorf("preStop hook: got path %q, scheme %q; want / and HTTP", h.Path, h.Scheme)
	}
	if v := c.Env[0].ValueFrom.FieldRef.APIVersion; v != "v1" {
		t.Errorf("env fieldRef apiVersion: got %q, want v1", v)
	}
	if p := c.Ports[0].HostPort; p != 80 {
		t.Errorf("hostPort on the host network: got %d, want the container port 80", p)
	}
	if pod.Spec.Volumes[0].EmptyDir == nil {
		t.Errorf("a volume with no source: got %+v, want an emptyDir", pod.Spec.Volumes[0].VolumeSource)
	}
	sources := pod.Spec.Volumes[1].Projected.Sources
	if e := sources[0].ServiceAccountToken.ExpirationSeconds; e == nil || *e != 3600 {
		t.Errorf("projected token's expirationSeconds: got %v, want 3600", e)
	}
	if v := sources[1].DownwardAPI.Items[0].FieldRef.APIVersion; v != "v1" {
		t.Errorf("projected downward API fieldRef apiVersion: got %q, want v1", v)
	}
}

func TestImagePullPolicyDefault(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{image: "nginx", want: corev1.PullAlways},
		{image: "nginx:latest", want: corev1.PullAlways},
		{image: "nginx:1.25", want: corev1.PullIfNotPresent},
		{image: "registry.local:5000/team/nginx", want: corev1.PullAlways},
		{image: "registry.local:5000/team/nginx:latest", want: corev1.PullAlways},
		{image: "registry.local:5000/team/nginx:1.25", want: corev1.PullIfNotPresent},
		{image: "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", want: corev1.PullIfNotPresent},
		{image: "nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", want: corev1.PullAlways},
		{image: "localhost:5000/nginx:v2", want: corev1.PullIfNotPresent},
		// references that do not parse, as upstream
		{image: "", want: corev1.PullIfNotPresent},
		{image: "Nginx", want: corev1.PullIfNotPresent},
		{image: " nginx", want: corev1.PullIfNotPresent},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			spec := &corev1.PodSpec{
				Containers:          []corev1.Container{{Name: "c", Image: tt.image}},
				EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: tt.image}}},
			}
			DefaultPodSpec(spec)
			if got := spec.Containers[0].ImagePullPolicy; got != tt.want {
				t.Errorf("imagePullPolicy for %q: got %q, want %q", tt.image, got, tt.want)
			}
			if got := spec.EphemeralContainers[0].ImagePullPolicy; got != tt.want {
				t.Errorf("an ephemeral container's imagePullPolicy for %q: got %q, want %q", tt.image, got, tt.want)
			}
		})
	}
}

// TestSchemeDefaultsPodsTemplatesAndLists checks the defaulting funcs are
// registered for each served type that has defaults, lists included.
func TestSchemeDefaultsPodsTemplatesAndLists(t *testing.T) {
	tests := []struct {
		name string
		// run defaults a fresh object and returns what should have been defaulted.
		run  func() []string
		want []string
	}{
		{
			name: "pod",
			run: func() []string {
				p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
				Scheme.Default(p)
				return []string{string(p.Spec.RestartPolicy), string(p.Spec.Containers[0].ImagePullPolicy)}
			},
			want: []string{"Always", "Always"},
		},
		{
			name: "podtemplate",
			run: func() []string {
				pt := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}}
				Scheme.Default(pt)
				return []string{string(pt.Template.Spec.RestartPolicy), string(pt.Template.Spec.Containers[0].ImagePullPolicy)}
			},
			want: []string{"Always", "IfNotPresent"},
		},
		{
			name: "pod list",
			run: func() []string {
				l := &corev1.PodList{Items: []corev1.Pod{{}, {Spec: corev1.PodSpec{DNSPolicy: corev1.DNSNone}}}}
				Scheme.Default(l)
				return []string{string(l.Items[0].Spec.DNSPolicy), string(l.Items[1].Spec.DNSPolicy)}
			},
			want: []string{"ClusterFirst", "None"},
		},
		{
			name: "podtemplate list",
			run: func() []string {
				l := &corev1.PodTemplateList{Items: []corev1.PodTemplate{{}}}
				Scheme.Default(l)
				return []string{l.Items[0].Template.Spec.SchedulerName}
			},
			want: []string{"default-scheduler"},
		},
		{
			name: "secret list",
			run: func() []string {
				l := &corev1.SecretList{Items: []corev1.Secret{{}, {Type: corev1.SecretTypeBasicAuth}}}
				Scheme.Default(l)
				return []string{string(l.Items[0].Type), string(l.Items[1].Type)}
			},
			want: []string{"Opaque", "kubernetes.io/basic-auth"},
		},
		{
			name: "namespace list",
			run: func() []string {
				l := &corev1.NamespaceList{Items: []corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}}
				Scheme.Default(l)
				return []string{string(l.Items[0].Status.Phase), l.Items[0].Labels[corev1.LabelMetadataName]}
			},
			want: []string{"Active", "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.run()); diff != "" {
				t.Errorf("defaulted values (-want +got):\n%s", diff)
			}
		})
	}
}
