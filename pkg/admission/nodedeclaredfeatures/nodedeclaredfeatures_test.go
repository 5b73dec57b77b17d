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

package nodedeclaredfeatures

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestNodeDeclaredFeatures: resizing a non-sidecar init container of a
// pod on a node that does not declare InPlacePodVerticalScalingInitContainers
// is refused in upstream's words; on a node that declares it, or when the
// update needs no feature, it is not.
func TestNodeDeclaredFeatures(t *testing.T) {
	plain := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}
	declaring := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "declaring"},
		Status: corev1.NodeStatus{DeclaredFeatures: []string{"InPlacePodVerticalScalingInitContainers"}}}
	factory := informers.NewSharedInformerFactory(fake.NewClientset(plain, declaring), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	pod := func(node, initCPU, cpu string, generation int64) *corev1.Pod {
		resources := func(cpu string) corev1.ResourceRequirements {
			return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: generation}, Spec: corev1.PodSpec{NodeName: node,
			InitContainers: []corev1.Container{{Name: "init", Resources: resources(initCPU)}},
			Containers:     []corev1.Container{{Name: "c", Resources: resources(cpu)}}}}
	}
	for _, tt := range []struct {
		name     string
		pod, old *corev1.Pod
		want     string
	}{
		{"an init container resized on a plain node", pod("plain", "2", "1", 2), pod("plain", "1", "1", 1),
			`pods "web" is forbidden: pod update requires features InPlacePodVerticalScalingInitContainers which are not available on node "plain"`},
		{"on a node that declares the feature", pod("declaring", "2", "1", 2), pod("declaring", "1", "1", 1), ""},
		{"a container resized", pod("plain", "1", "2", 2), pod("plain", "1", "1", 1), ""},
		{"no change of generation", pod("plain", "2", "1", 1), pod("plain", "1", "1", 1), ""},
	} {
		a := admission.NewAttributesRecord(tt.pod, tt.old, corev1.SchemeGroupVersion.WithKind("Pod"), "default", "web", corev1.SchemeGroupVersion.WithResource("pods"),
			"resize", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "alice"})
		got := ""
		if err := p.Validate(t.Context(), a, nil); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
