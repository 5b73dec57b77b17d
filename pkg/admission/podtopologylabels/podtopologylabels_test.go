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

package podtopologylabels

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestPodTopologyLabels: a pod created on a node, or a binding to one,
// gets the node's zone and region labels (overwriting its own), and
// nothing else of the node's; other pods, bindings to other kinds and
// other subresources are left alone.
func TestPodTopologyLabels(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{
		corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", corev1.LabelHostname: "node-1"}}}
	factory := informers.NewSharedInformerFactory(fake.NewClientset(node), 0)
	p := New()
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	admit := func(obj runtime.Object, kind, subresource string) {
		t.Helper()
		a := admission.NewAttributesRecord(obj, nil, corev1.SchemeGroupVersion.WithKind(kind), "default", "p", corev1.SchemeGroupVersion.WithResource("pods"),
			subresource, admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "alice"})
		if err := p.Admit(t.Context(), a, nil); err != nil {
			t.Fatal(err)
		}
	}
	topology := map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}

	onNode := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", corev1.LabelTopologyZone: "mine"}}, Spec: corev1.PodSpec{NodeName: "node-1"}}
	admit(onNode, "Pod", "")
	if diff := cmp.Diff(map[string]string{"app": "web", corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}, onNode.Labels); diff != "" {
		t.Errorf("a pod created on the node: labels (-want +got):\n%s", diff)
	}
	for _, pod := range []*corev1.Pod{{}, {Spec: corev1.PodSpec{NodeName: "gone"}}} {
		admit(pod, "Pod", "")
		if pod.Labels != nil {
			t.Errorf("a pod on node %q: labels %v, want none", pod.Spec.NodeName, pod.Labels)
		}
	}
	binding := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	admit(binding, "Binding", "binding")
	if diff := cmp.Diff(topology, binding.Labels); diff != "" {
		t.Errorf("a binding to the node: labels (-want +got):\n%s", diff)
	}
	elsewhere := &corev1.Binding{Target: corev1.ObjectReference{Kind: "Other", Name: "node-1"}}
	admit(elsewhere, "Binding", "binding")
	if elsewhere.Labels != nil {
		t.Errorf("a binding to another kind: labels %v, want none", elsewhere.Labels)
	}
	status := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "node-1"}}
	admit(status, "Pod", "status")
	if status.Labels != nil {
		t.Errorf("a status update: labels %v, want none", status.Labels)
	}
}
