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

package podresize

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestPodResizeValidator: a resize beyond the node's allocatable cpu or
// memory, or on a node that is not Linux, is refused with upstream's 403
// and cause; one within it, one that changes nothing, or one of a pod on
// no node is not.
func TestPodResizeValidator(t *testing.T) {
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	linux := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "linux"}, Status: corev1.NodeStatus{Allocatable: allocatable}}
	windows := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "windows", Labels: map[string]string{corev1.LabelOSStable: "windows"}}, Status: corev1.NodeStatus{Allocatable: allocatable}}
	factory := informers.NewSharedInformerFactory(fake.NewClientset(linux, windows), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	pod := func(node, cpu string, generation int64) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: generation}, Spec: corev1.PodSpec{NodeName: node,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	for _, tt := range []struct {
		name     string
		pod, old *corev1.Pod
		want     string
		cause    metav1.CauseType
	}{
		{"within", pod("linux", "3", 2), pod("linux", "1", 1), "", ""},
		{"beyond", pod("linux", "5", 2), pod("linux", "1", 1),
			`pods "web" is forbidden: node didn't have enough allocatable resources: cpu, requested: 5000, allocatable: 4000`, ReasonNodeCapacity},
		{"windows", pod("windows", "1", 2), pod("windows", "2", 1),
			`pods "web" is forbidden: pod resize is only supported on linux nodes, node "windows" is "windows"`, ReasonUnsupportedPlatform},
		{"no change", pod("linux", "5", 1), pod("linux", "5", 1), "", ""},
		{"no node", pod("", "5", 2), pod("", "1", 1), "", ""},
		{"a node not there", pod("gone", "1", 2), pod("gone", "2", 1), `pods "web" is forbidden: node "gone" not found`, ""},
	} {
		a := admission.NewAttributesRecord(tt.pod, tt.old, corev1.SchemeGroupVersion.WithKind("Pod"), "default", "web", corev1.SchemeGroupVersion.WithResource("pods"),
			"resize", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "alice"})
		err := p.Validate(t.Context(), a, nil)
		if got := errString(err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
		var status *apierrors.StatusError
		if tt.cause != "" && (!apierrors.IsForbidden(err) || !errors.As(err, &status) || !hasCause(status, tt.cause)) {
			t.Errorf("%s: %v, want a 403 with cause %s", tt.name, err, tt.cause)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func hasCause(s *apierrors.StatusError, cause metav1.CauseType) bool {
	for _, c := range s.ErrStatus.Details.Causes {
		if c.Type == cause {
			return true
		}
	}
	return false
}
