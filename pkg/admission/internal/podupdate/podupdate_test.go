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

package podupdate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// TestUpdate: only an update of a pod on a node that changes its
// generation is checked, against the node it names; objects that are not
// pods are a 400, a node that is not there upstream's 403.
func TestUpdate(t *testing.T) {
	n := NewNodes("Test", admission.Update)
	if err := n.ValidateInitialization(); err == nil {
		t.Error("no error without a node lister")
	}
	factory := informers.NewSharedInformerFactory(fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}), 0)
	n.SetExternalKubeInformerFactory(factory)
	if err := n.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	pod := func(node string, generation int64) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: generation}, Spec: corev1.PodSpec{NodeName: node}}
	}
	update := func(obj, old runtime.Object) admission.Attributes {
		return admission.NewAttributesRecord(obj, old, corev1.SchemeGroupVersion.WithKind("Pod"), "default", "web", corev1.SchemeGroupVersion.WithResource("pods"),
			"", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "alice"})
	}
	for _, tt := range []struct {
		name     string
		obj, old runtime.Object
		checked  bool
		nodeErr  string
	}{
		{"on a node, a new generation", pod("node-1", 2), pod("node-1", 1), true, ""},
		{"the same generation", pod("node-1", 1), pod("node-1", 1), false, ""},
		{"on no node", pod("", 2), pod("", 1), false, ""},
		{"on a node not there", pod("gone", 2), pod("gone", 1), true, `pods "web" is forbidden: node "gone" not found`},
	} {
		a := update(tt.obj, tt.old)
		got, old, err := n.Update(a)
		if err != nil || (got != nil) != tt.checked || (old != nil) != tt.checked {
			t.Errorf("%s: Update = %v, %v, %v; want pods: %t", tt.name, got, old, err, tt.checked)
			continue
		}
		if !tt.checked {
			continue
		}
		node, err := n.Node(a, got)
		switch {
		case tt.nodeErr == "" && (err != nil || node.Name != got.Spec.NodeName):
			t.Errorf("%s: Node = %v, %v", tt.name, node, err)
		case tt.nodeErr != "" && (!apierrors.IsForbidden(err) || err.Error() != tt.nodeErr):
			t.Errorf("%s: Node error %v, want a 403 %q", tt.name, err, tt.nodeErr)
		}
	}
	for _, a := range []admission.Attributes{update(&corev1.Service{}, pod("node-1", 1)), update(pod("node-1", 2), &corev1.Service{})} {
		if _, _, err := n.Update(a); !apierrors.IsBadRequest(err) {
			t.Errorf("%T over %T: %v, want a 400", a.GetObject(), a.GetOldObject(), err)
		}
	}
}
