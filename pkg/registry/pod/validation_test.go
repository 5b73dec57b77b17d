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
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// defaulted is spec with the defaults a pod's decoding gives it.
func defaulted(spec *corev1.PodSpec) *corev1.PodSpec {
	p := &corev1.Pod{Spec: *spec.DeepCopy()}
	api.Scheme.Default(p)
	return &p.Spec
}

// TestAllowPrivileged: with kube-apiserver's --allow-privileged=false a
// privileged container, init container included, is refused with
// upstream's error; by default it is allowed (as envtest runs it).
func TestAllowPrivileged(t *testing.T) {
	t.Cleanup(func() { AllowPrivileged(true) })
	privileged := &corev1.SecurityContext{Privileged: ptr.To(true)}
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox", SecurityContext: privileged}},
		Containers:     []corev1.Container{{Name: "c", Image: "nginx", SecurityContext: privileged}, {Name: "d", Image: "nginx"}},
	}
	if errs := ValidatePodSpec(defaulted(spec), field.NewPath("spec")); len(errs) != 0 {
		t.Errorf("allowed: got %v, want no errors", errs)
	}
	AllowPrivileged(false)
	errs := ValidatePodSpec(defaulted(spec), field.NewPath("spec"))
	want := []string{ // upstream's order: containers, then init containers
		"spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
		"spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
	}
	if len(errs) != len(want) {
		t.Fatalf("disallowed: got %v, want %v", errs, want)
	}
	for i, err := range errs {
		if err.Error() != want[i] {
			t.Errorf("error %d: got %q, want %q", i, err.Error(), want[i])
		}
	}
}

// TestValidationMessagesAsUpstream: errors a user reads, in the words
// kube-apiserver 1.37 answered the same pod with.
func TestValidationMessagesAsUpstream(t *testing.T) {
	spec := &corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Containers: []corev1.Container{{Name: "c", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 99999, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
	}
	want := []string{
		`spec.volumes[1].name: Duplicate value: "v"`,
		`spec.containers[0].ports[0].containerPort: Invalid value: 99999: must be between 1 and 65535, inclusive`,
		`spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	}
	var got []string
	for _, err := range ValidatePodSpec(defaulted(spec), field.NewPath("spec")) {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestNetworkValidationAsUpstream: host ports, DNS and host aliases, as
// kube-apiserver 1.37 answered the same pod (its StrictIPCIDRValidation on).
func TestNetworkValidationAsUpstream(t *testing.T) {
	spec := &corev1.PodSpec{
		DNSPolicy: corev1.DNSNone,
		DNSConfig: &corev1.PodDNSConfig{
			Nameservers: []string{"1.2.3.4", "001.2.3.4", "::ffff:1.2.3.4", "8.8.8.8"},
			Searches:    []string{"a.b.", ".", "bad_name!"},
			Options:     []corev1.PodDNSConfigOption{{}},
		},
		HostAliases: []corev1.HostAlias{{IP: "010.0.0.2", Hostnames: []string{"ok", "Bad!"}}},
		InitContainers: []corev1.Container{
			{Name: "i1", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 1, Protocol: corev1.ProtocolTCP}}},
			{Name: "i2", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 1, HostPort: 9, Protocol: corev1.ProtocolTCP}, {ContainerPort: 2, HostPort: 9, Protocol: corev1.ProtocolTCP}}},
		},
		Containers: []corev1.Container{
			{Name: "a", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}},
			{Name: "b", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 81, HostPort: 8080, Protocol: corev1.ProtocolTCP},
				{ContainerPort: 82, HostPort: 8080, HostIP: "1.2.3.4", Protocol: corev1.ProtocolTCP}}},
		},
	}
	want := []string{
		`spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"`,
		`spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//9"`, // upstream's index: each init container alone
		`spec.dnsConfig.nameservers: Invalid value: ["1.2.3.4","001.2.3.4","::ffff:1.2.3.4","8.8.8.8"]: must not have more than 3 nameservers`,
		`spec.dnsConfig.nameservers[1]: Invalid value: "001.2.3.4": must not have leading 0s`,
		`spec.dnsConfig.nameservers[2]: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address`,
		`spec.dnsConfig.searches[2]: Invalid value: "bad_name!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')`,
		`spec.dnsConfig.options[0]: Required value: must not be empty`,
		`spec.hostAliases[0].ip: Invalid value: "010.0.0.2": must not have leading 0s`,
		`spec.hostAliases[0].hostnames[1]: Invalid value: "Bad!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
	}
	var got []string
	for _, err := range ValidatePodSpec(defaulted(spec), field.NewPath("spec")) {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}

	spec = &corev1.PodSpec{DNSPolicy: corev1.DNSNone, Containers: []corev1.Container{{Name: "a", Image: "nginx"}}}
	errs := ValidatePodSpec(defaulted(spec), field.NewPath("spec"))
	if want := "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"; len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("dnsPolicy None without dnsConfig: got %v, want %q", errs, want)
	}
}
