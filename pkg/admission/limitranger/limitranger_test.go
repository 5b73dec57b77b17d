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

package limitranger

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// newPlugin returns the plugin over a fake client holding objects, with
// an informer factory that is started only when synced is true.
func newPlugin(t *testing.T, synced bool, objects ...runtime.Object) (*Plugin, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	p := New()
	p.SetExternalKubeClientSet(client)
	p.SetExternalKubeInformerFactory(factory)
	if err := p.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	if synced {
		factory.Start(t.Context().Done())
		factory.WaitForCacheSync(t.Context().Done())
		t.Cleanup(factory.Shutdown)
	}
	return p, client
}

func podAttributes(pod, old *corev1.Pod, subresource string, op admission.Operation) admission.Attributes {
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	return admission.NewAttributesRecord(pod, oldObj, corev1.SchemeGroupVersion.WithKind("Pod"), pod.Namespace, pod.Name,
		corev1.SchemeGroupVersion.WithResource("pods"), subresource, op, nil, false, nil)
}

// TestAdmitValidate: upstream's TestLimitRangerAdmitPod and
// TestLimitRangerIgnoresSubresource, through the plugin: a created Pod
// is checked and refused as Forbidden with upstream's message; an
// update, a status update and a Pod being deleted are not checked; a
// resize is.
func TestAdmitValidate(t *testing.T) {
	lr := limitRange(
		item(corev1.LimitTypePod, compute("50m", "2Mi"), compute("200m", "4Gi"), nil, nil, nil),
		item(corev1.LimitTypeContainer, compute("25m", "1Mi"), compute("100m", "2Gi"), nil, nil, nil))
	p, _ := newPlugin(t, true, lr)
	ctx := context.Background()
	pod := podOf("testPod", 1, needs(nil, nil))
	create := podAttributes(pod, nil, "", admission.Create)
	if err := p.Admit(ctx, create, nil); err != nil {
		t.Fatal(err)
	}
	err := p.Validate(ctx, create, nil)
	want := `pods "testPod" is forbidden: [minimum cpu usage per Pod is 50m.  No request is specified, minimum memory usage per Pod is 2Mi.  No request is specified, ` +
		`maximum cpu usage per Pod is 200m.  No limit is specified, maximum memory usage per Pod is 4Gi.  No limit is specified, ` +
		`minimum cpu usage per Container is 25m.  No request is specified, minimum memory usage per Container is 1Mi.  No request is specified, ` +
		`maximum cpu usage per Container is 100m.  No limit is specified, maximum memory usage per Container is 2Gi.  No limit is specified]`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("create: got %v, want Forbidden %q", err, want)
	}
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	for name, a := range map[string]admission.Attributes{
		"update":   podAttributes(pod, pod, "", admission.Update),
		"status":   podAttributes(pod, pod, "status", admission.Update),
		"deleting": podAttributes(deleting, deleting, "resize", admission.Update),
	} {
		if err := p.Validate(ctx, a, nil); err != nil {
			t.Errorf("%s: got %v, want no error", name, err)
		}
	}
	if err := p.Validate(ctx, podAttributes(pod, pod, "resize", admission.Update), nil); !apierrors.IsForbidden(err) {
		t.Errorf("resize: got %v, want Forbidden", err)
	}
}

// TestAdmitDefaults: a created Pod gets the defaults; one in a namespace
// without LimitRanges is left as it is.
func TestAdmitDefaults(t *testing.T) {
	p, _ := newPlugin(t, true, validLimitRange())
	pod := podOf("p", 1, needs(nil, nil))
	if err := p.Admit(context.Background(), podAttributes(pod, nil, "", admission.Create), nil); err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.Containers[0].Resources.Limits.Cpu().String(); got != "75m" {
		t.Errorf("cpu limit: got %s, want 75m", got)
	}
	other := podOf("p", 1, needs(nil, nil))
	other.Namespace = "other"
	if err := p.Admit(context.Background(), podAttributes(other, nil, "", admission.Create), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Annotations[Annotation]; ok || len(other.Spec.Containers[0].Resources.Limits) > 0 {
		t.Errorf("other namespace: got %v, %v, want no defaults", other.Annotations, other.Spec.Containers[0].Resources)
	}
}

// TestLiveLookup: upstream's TestLimitRanger_GetLimitRangesFixed22422:
// with an informer that has seen nothing, the LimitRanges are listed
// live, and that list is reused within its TTL.
func TestLiveLookup(t *testing.T) {
	p, client := newPlugin(t, false, validLimitRange())
	lists := 0
	client.PrependReactor("list", "limitranges", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		return false, nil, nil
	})
	for range 2 {
		pod := podOf("p", 1, needs(nil, nil))
		if err := p.Admit(context.Background(), podAttributes(pod, nil, "", admission.Create), nil); err != nil {
			t.Fatal(err)
		}
		if got := pod.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "50m" {
			t.Errorf("cpu request: got %s, want 50m", got)
		}
	}
	if lists != 1 {
		t.Errorf("live lists: got %d, want 1", lists)
	}
}
