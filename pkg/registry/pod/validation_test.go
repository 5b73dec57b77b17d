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
)

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
	if errs := ValidatePodSpec(spec, field.NewPath("spec")); len(errs) != 0 {
		t.Errorf("allowed: got %v, want no errors", errs)
	}
	AllowPrivileged(false)
	errs := ValidatePodSpec(spec, field.NewPath("spec"))
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
	for _, err := range ValidatePodSpec(spec, field.NewPath("spec")) {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
