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

	corev1 "k8s.io/api/core/v1"
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
	want := []string{
		"spec.initContainers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
		"spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
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
