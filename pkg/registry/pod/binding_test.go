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
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// TestBinding: a Binding assigns an unassigned pod to its node as
// upstream's pods/binding does (checked side by side with kube-apiserver
// 1.37): the node set, the nomination cleared, the binding's annotations
// and labels merged, PodScheduled true; a second binding is a 409, and a
// dry run changes nothing.
func TestBinding(t *testing.T) {
	p := newPods(t)
	s, err := New(p.mem.Options("pods"))
	if err != nil {
		t.Fatal(err)
	}
	bindings, legacy := s.Binding, s.LegacyBinding
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	pod := modified(validPod(), func(pod *corev1.Pod) {
		pod.Labels = map[string]string{"app": "web"}
		pod.Status.NominatedNodeName = "node-9"
	})
	p.seed(t, pod)
	binding := func(name, node string) *corev1.Binding {
		return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Name: node}}
	}
	get := func() *corev1.Pod {
		obj, err := p.store.Get(ctx, "web", &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*corev1.Pod)
	}

	if _, err := bindings.Create(ctx, "web", binding("web", "node-0"), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("a dry run: %v", err)
	}
	if got := get(); got.Spec.NodeName != "" {
		t.Errorf("after a dry run: nodeName %q, want none", got.Spec.NodeName)
	}
	if _, err := bindings.Create(ctx, "web", binding("other", "node-1"), nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("a binding named other than the pod: got %v, want 400", err)
	}
	bad := binding("web", "")
	bad.Target.Kind = "Pod"
	if _, err := bindings.Create(ctx, "web", bad, nil, &metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a binding to a pod, with no name: got %v, want 422", err)
	}

	b := binding("web", "node-1")
	b.Annotations, b.Labels = map[string]string{"scheduled-by": "test"}, map[string]string{"topology.kubernetes.io/zone": "z1"}
	out, err := bindings.Create(ctx, "web", b, nil, &metav1.CreateOptions{})
	if status, ok := out.(*metav1.Status); err != nil || !ok || status.Status != metav1.StatusSuccess {
		t.Fatalf("binding: got %v, %v; want a Success status", out, err)
	}
	got := get()
	scheduled := len(got.Status.Conditions) == 1 && got.Status.Conditions[0].Type == corev1.PodScheduled && got.Status.Conditions[0].Status == corev1.ConditionTrue
	if got.Spec.NodeName != "node-1" || got.Status.NominatedNodeName != "" || got.Annotations["scheduled-by"] != "test" ||
		got.Labels["app"] != "web" || got.Labels["topology.kubernetes.io/zone"] != "z1" || !scheduled {
		t.Errorf("bound pod: node %q, nominated %q, annotations %v, labels %v, conditions %v",
			got.Spec.NodeName, got.Status.NominatedNodeName, got.Annotations, got.Labels, got.Status.Conditions)
	}

	_, err = legacy.Create(ctx, binding("web", "node-2"), nil, &metav1.CreateOptions{})
	if want := `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"`; !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("binding a bound pod: got %v, want %s", err, want)
	}
	if _, err := legacy.Create(ctx, binding("missing", "node-2"), nil, &metav1.CreateOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("binding a missing pod: got %v, want 404", err)
	}
}
