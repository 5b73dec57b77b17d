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
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
)

// TestUpdateThroughStores runs updates through the generic store of pods
// and of pods/status: each keeps what its endpoint may not change.
func TestUpdateThroughStores(t *testing.T) {
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid"}
	stored := modified(validPod(), func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{owner}
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort}
	})
	newStatus := corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}}, QOSClass: corev1.PodQOSBestEffort}
	tests := []struct {
		name       string
		status     bool
		wantImage  string
		wantStatus corev1.PodStatus
		wantOwners []metav1.OwnerReference
	}{
		{name: "pods: spec and metadata change, status kept", status: false, wantImage: "nginx:1.26", wantStatus: stored.Status, wantOwners: nil},
		{name: "pods/status: status changes, spec and ownerReferences kept", status: true, wantImage: "nginx:1.25", wantStatus: newStatus, wantOwners: []metav1.OwnerReference{owner}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPods(t)
			current := p.seed(t, stored)
			update := modified(current, func(pod *corev1.Pod) {
				pod.Spec.Containers[0].Image = "nginx:1.26"
				pod.OwnerReferences = nil
				pod.Status = newStatus
			})
			ctx := genericapirequest.WithNamespace(context.Background(), "default")
			var updater rest.Updater = p.store
			if tt.status {
				updater = p.status
			}
			out, created, err := updater.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			if created {
				t.Errorf("Update created: got true, want false")
			}
			got := out.(*corev1.Pod)
			if got.Spec.Containers[0].Image != tt.wantImage {
				t.Errorf("image: got %q, want %q", got.Spec.Containers[0].Image, tt.wantImage)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOwners, got.OwnerReferences); diff != "" {
				t.Errorf("ownerReferences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusUpdateKeepsDeletionTimestamp(t *testing.T) {
	deleted := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	other := metav1.NewTime(deleted.Add(time.Hour))
	tests := []struct {
		name   string
		stored *metav1.Time
		sent   *metav1.Time
		want   *metav1.Time
	}{
		{name: "a deleted pod's may not be cleared", stored: &deleted, sent: nil, want: &deleted},
		{name: "a deleted pod's may not be changed", stored: &deleted, sent: &other, want: &deleted},
		{name: "a live pod's may not be set", stored: nil, sent: &other, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPods(t)
			current := p.seed(t, modified(validPod(), func(pod *corev1.Pod) {
				pod.DeletionTimestamp = tt.stored
				if tt.stored != nil {
					pod.DeletionGracePeriodSeconds = ptr.To[int64](30)
					pod.Finalizers = []string{"example.com/keep"}
				}
			}))
			update := modified(current, func(pod *corev1.Pod) {
				pod.DeletionTimestamp = tt.sent
				pod.Status.Phase = corev1.PodSucceeded
			})
			ctx := genericapirequest.WithNamespace(context.Background(), "default")
			out, _, err := p.status.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*corev1.Pod)
			if !got.DeletionTimestamp.Equal(tt.want) {
				t.Errorf("deletionTimestamp: got %v, want %v", got.DeletionTimestamp, tt.want)
			}
			if got.Status.Phase != corev1.PodSucceeded {
				t.Errorf("phase: got %q, want %q", got.Status.Phase, corev1.PodSucceeded)
			}
		})
	}
}

func TestStatusUpdateOfMissingPod(t *testing.T) {
	p := newPods(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	// No UID or resourceVersion: nothing but the subresource stops a create.
	pod := modified(validPod(), func(p *corev1.Pod) { p.UID, p.ResourceVersion = "", "" })
	_, _, err := p.status.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(pod), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, true, &metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Update of a missing pod's status with forceAllowCreate: got error %v, want NotFound", err)
	}
	if _, ok := p.mem.Stored("/pods/default/web"); ok {
		t.Errorf("pod after a status update of a missing pod: got stored, want none")
	}
}
