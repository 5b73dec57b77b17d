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

package runtimeclass

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// newPlugin returns the plugin over an informer that lists listed and a
// client that has live too (a class the informer has not seen yet).
func newPlugin(t *testing.T, listed []runtime.Object, live ...runtime.Object) *Plugin {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(listed...), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	p.SetExternalKubeClientSet(fake.NewClientset(append(listed, live...)...))
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	return p
}

// admit runs both phases on pod's create, as the chain does.
func admit(t *testing.T, p *Plugin, pod *corev1.Pod) error {
	t.Helper()
	a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "default", "p", corev1.SchemeGroupVersion.WithResource("pods"),
		"", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
	if err := p.Admit(t.Context(), a, nil); err != nil {
		return err
	}
	return p.Validate(t.Context(), a, nil)
}

var overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}

func gvisor() *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: overhead},
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{"runtime": "gvisor"},
			Tolerations:  []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}, {Key: "sandbox", Operator: corev1.TolerationOpEqual, Value: "x"}},
		},
	}
}

// TestRuntimeClass: the class's overhead, node selector and tolerations
// (less the redundant ones) reach the pod; what conflicts with them, or an
// overhead without a class, is refused in upstream's words.
func TestRuntimeClass(t *testing.T) {
	withClass := func(name string) corev1.PodSpec { return corev1.PodSpec{RuntimeClassName: ptr.To(name)} }
	tests := []struct {
		name    string
		listed  []runtime.Object
		live    []runtime.Object
		spec    corev1.PodSpec
		want    corev1.PodSpec
		wantErr string
	}{
		{name: "applied", listed: []runtime.Object{gvisor()}, spec: withClass("gvisor"), want: corev1.PodSpec{
			RuntimeClassName: ptr.To("gvisor"), Overhead: overhead, NodeSelector: map[string]string{"runtime": "gvisor"},
			Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}},
		}},
		{name: "found live", live: []runtime.Object{gvisor()}, spec: withClass("gvisor"), want: corev1.PodSpec{
			RuntimeClassName: ptr.To("gvisor"), Overhead: overhead, NodeSelector: map[string]string{"runtime": "gvisor"},
			Tolerations: []corev1.Toleration{{Key: "sandbox", Operator: corev1.TolerationOpExists}},
		}},
		{name: "not found", spec: withClass("kata"), wantErr: `pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found`},
		{name: "another overhead", listed: []runtime.Object{gvisor()},
			spec:    corev1.PodSpec{RuntimeClassName: ptr.To("gvisor"), Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			wantErr: `pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`},
		{name: "a conflicting node selector", listed: []runtime.Object{gvisor()},
			spec:    corev1.PodSpec{RuntimeClassName: ptr.To("gvisor"), NodeSelector: map[string]string{"runtime": "runc"}},
			wantErr: `pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = gvisor; pod.spec.nodeSelector[runtime] = runc`},
		{name: "an overhead without a class", spec: corev1.PodSpec{Overhead: overhead},
			wantErr: `pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`},
		{name: "no class", spec: corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}, want: corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: tt.spec}
			err := admit(t, newPlugin(t, tt.listed, tt.live...), pod)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if diff := cmp.Diff(tt.want, pod.Spec); diff != "" {
				t.Errorf("pod spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMergeTolerations: upstream's cases of MergeTolerations.
func TestMergeTolerations(t *testing.T) {
	exists := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}
	equal := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v"}
	noExecute := func(s int64) corev1.Toleration {
		return corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(s)}
	}
	everything := corev1.Toleration{Operator: corev1.TolerationOpExists}
	tests := []struct {
		name          string
		first, second []corev1.Toleration
		want          []corev1.Toleration
	}{
		{"a superset later wins", []corev1.Toleration{equal}, []corev1.Toleration{exists}, []corev1.Toleration{exists}},
		{"equal ones: the first", []corev1.Toleration{equal}, []corev1.Toleration{equal}, []corev1.Toleration{equal}},
		{"the longer NoExecute tolerates more", []corev1.Toleration{noExecute(10)}, []corev1.Toleration{noExecute(20)}, []corev1.Toleration{noExecute(20)}},
		{"everything", []corev1.Toleration{equal, noExecute(5)}, []corev1.Toleration{everything}, []corev1.Toleration{everything}},
		{"none", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mergeTolerations(tt.first, tt.second)); diff != "" {
				t.Errorf("merged (-want +got):\n%s", diff)
			}
		})
	}
}
