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

package resourcequota

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

func deviceClass(name string, created time.Time, extended string) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}
	if extended != "" {
		c.Spec.ExtendedResourceName = ptr.To(extended)
	}
	return c
}

// TestDeviceClasses: as upstream's ExtendedResourceCache, the implicit
// name of a class, and of two classes naming the same extended resource
// the newer (the older, added after, gets neither name, as upstream's);
// a deleted class is forgotten.
func TestDeviceClasses(t *testing.T) {
	now := time.Now()
	d := newDeviceClasses()
	old, newer := deviceClass("old", now, "example.com/gpu"), deviceClass("newer", now.Add(time.Second), "example.com/gpu")
	d.OnAdd(newer, true)
	d.OnAdd(old, true)
	if got := d.deviceClass("example.com/gpu"); got == nil || got.Name != "newer" {
		t.Errorf("example.com/gpu: got %v, want class newer", got)
	}
	if got := d.deviceClass(corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + "newer")); got == nil || got.Name != "newer" {
		t.Errorf("implicit name of newer: got %v, want it", got)
	}
	if got := d.deviceClass(corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + "old")); got != nil {
		t.Errorf("implicit name of old: got %v, want none", got.Name)
	}
	for _, name := range []string{"old", "newer"} {
		if got := d.extendedResource(name); got != "example.com/gpu" {
			t.Errorf("extended resource of %s: got %q, want example.com/gpu", name, got)
		}
	}
	d.OnDelete(cache.DeletedFinalStateUnknown{Obj: newer})
	if got := d.deviceClass("example.com/gpu"); got != nil {
		t.Errorf("example.com/gpu after newer's deletion: got %v, want none", got.Name)
	}
	if got := d.extendedResource("newer"); got != "" {
		t.Errorf("extended resource of newer after its deletion: got %q, want none", got)
	}
}

// TestNewExtendedResources: the informers of a factory give the classes,
// the pods and the claims the scheduler made for a pod, by its UID.
func TestNewExtendedResources(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid"}}
	owned := testClaim("owned", "p")
	owned.Namespace = "ns"
	plain := testClaim("plain", "")
	client := fake.NewClientset(deviceClass("gpu", time.Now(), "example.com/gpu"), pod, owned, plain)
	factory := informers.NewSharedInformerFactory(client, 0)
	x, err := NewExtendedResources(factory)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), x.HasSynced) {
		t.Fatal("informers not synced")
	}
	if got := x.extendedResource("gpu"); got != "example.com/gpu" {
		t.Errorf("extended resource of gpu: got %q, want example.com/gpu", got)
	}
	claims, err := x.owned("ns", "uid")
	if err != nil || len(claims) != 1 || claims[0].Name != "owned" {
		t.Errorf("claims of pod uid: got %v (%v), want owned", claims, err)
	}
	if got := x.podUsage(owned, clock.RealClock{}); got == nil {
		t.Error("usage of the pod of owned: got none")
	}
	if got := x.podUsage(plain, clock.RealClock{}); got != nil {
		t.Errorf("usage of the pod of plain: got %v, want none", got)
	}
}
