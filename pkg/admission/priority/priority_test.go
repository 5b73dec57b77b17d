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

package priority

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func newPlugin(t *testing.T, classes ...runtime.Object) *Plugin {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(classes...), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	return p
}

func class(name string, value int32, globalDefault bool, policy corev1.PreemptionPolicy) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault, PreemptionPolicy: &policy}
}

func createPod(t *testing.T, p *Plugin, pod *corev1.Pod) error {
	t.Helper()
	a := admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "default", "p", corev1.SchemeGroupVersion.WithResource("pods"),
		"", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
	return p.Admit(t.Context(), a, nil)
}

// TestPodPriorities: a created pod gets its class's priority and policy,
// the default class's, or 0 and PreemptLowerPriority; a class that does
// not exist, or a priority or policy of its own that differs, is refused
// with upstream's words.
func TestPodPriorities(t *testing.T) {
	high := class("high", 1000, false, corev1.PreemptNever)
	tests := []struct {
		name       string
		classes    []runtime.Object
		pod        corev1.PodSpec
		wantClass  string
		wantValue  int32
		wantPolicy corev1.PreemptionPolicy
		wantErr    string
	}{
		{name: "no class, no default", wantValue: 0, wantPolicy: corev1.PreemptLowerPriority},
		{name: "the default class, the lowest of two", classes: []runtime.Object{high, class("low", 10, true, corev1.PreemptNever), class("mid", 50, true, corev1.PreemptLowerPriority)},
			wantClass: "low", wantValue: 10, wantPolicy: corev1.PreemptNever},
		{name: "a named class", classes: []runtime.Object{high}, pod: corev1.PodSpec{PriorityClassName: "high"}, wantClass: "high", wantValue: 1000, wantPolicy: corev1.PreemptNever},
		{name: "an unknown class", pod: corev1.PodSpec{PriorityClassName: "nope"},
			wantErr: `pods "p" is forbidden: no PriorityClass with name nope was found`},
		{name: "another priority", classes: []runtime.Object{high}, pod: corev1.PodSpec{PriorityClassName: "high", Priority: ptr.To[int32](5)},
			wantErr: `pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`},
		{name: "another policy", classes: []runtime.Object{high}, pod: corev1.PodSpec{PriorityClassName: "high", PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)},
			wantErr: `pods "p" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: tt.pod}
			err := createPod(t, newPlugin(t, tt.classes...), pod)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.PriorityClassName != tt.wantClass || ptr.Deref(pod.Spec.Priority, -1) != tt.wantValue || ptr.Deref(pod.Spec.PreemptionPolicy, "") != tt.wantPolicy {
				t.Errorf("got class %q, priority %v, policy %v; want %q, %d, %s", pod.Spec.PriorityClassName, ptr.Deref(pod.Spec.Priority, -1),
					ptr.Deref(pod.Spec.PreemptionPolicy, ""), tt.wantClass, tt.wantValue, tt.wantPolicy)
			}
		})
	}
}

// TestOneGlobalDefault: a second global default class is refused; the
// default itself may be updated.
func TestOneGlobalDefault(t *testing.T) {
	p := newPlugin(t, class("low", 10, true, corev1.PreemptLowerPriority))
	validate := func(pc *schedulingv1.PriorityClass, op admission.Operation) error {
		a := admission.NewAttributesRecord(pc, nil, schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"), "", pc.Name,
			schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), "", op, nil, false, &user.DefaultInfo{Name: "alice"})
		return p.Validate(t.Context(), a, nil)
	}
	want := `priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist`
	if err := validate(class("other", 5, true, corev1.PreemptLowerPriority), admission.Create); err == nil || err.Error() != want {
		t.Errorf("a second default: got error %v, want %q", err, want)
	}
	if err := validate(class("low", 11, true, corev1.PreemptLowerPriority), admission.Update); err != nil {
		t.Errorf("updating the default: got error %v, want none", err)
	}
	if err := validate(class("other", 5, false, corev1.PreemptLowerPriority), admission.Create); err != nil {
		t.Errorf("a class that is not default: got error %v, want none", err)
	}
}

// TestDeletesPass: a pod's delete, which has no object, is let through.
func TestDeletesPass(t *testing.T) {
	a := admission.NewAttributesRecord(nil, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "default", "p", corev1.SchemeGroupVersion.WithResource("pods"),
		"", admission.Delete, &metav1.DeleteOptions{}, false, &user.DefaultInfo{Name: "alice"})
	if err := newPlugin(t).Admit(t.Context(), a, nil); err != nil {
		t.Errorf("a pod's delete: got error %v, want none", err)
	}
}
