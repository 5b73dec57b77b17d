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

package apps

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// workloadStores are the stores of one workload on a registrytest.MemStorage.
type workloadStores struct {
	mem    *registrytest.MemStorage
	store  *registry.REST
	status *registry.StatusREST
	scale  *registry.ScaleREST
}

func newStores(t *testing.T, resource string) workloadStores {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options(resource))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	s := workloadStores{mem: mem, store: storages[resource].(*registry.REST), status: storages[resource+"/status"].(*registry.StatusREST)}
	if scale, ok := storages[resource+"/scale"]; ok {
		s.scale = scale.(*registry.ScaleREST)
	}
	return s
}

func (s workloadStores) seed(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	m := obj.(metav1.Object)
	key, err := s.store.KeyFunc(genericapirequest.WithNamespace(context.Background(), m.GetNamespace()), m.GetName())
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return s.mem.Seed(t, key, obj)
}

var nsContext = genericapirequest.WithNamespace(context.Background(), "default")

// TestUpdateThroughStores runs updates through the generic store of each
// workload and of its status subresource: each keeps what its endpoint may not change.
func TestUpdateThroughStores(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			stored := k.valid()
			k.status(stored)
			stored.(metav1.Object).SetLabels(map[string]string{"team": "a"})
			for _, viaStatus := range []bool{false, true} {
				name := map[bool]string{false: "main", true: "status"}[viaStatus]
				t.Run(name, func(t *testing.T) {
					s := newStores(t, k.resource)
					current := s.seed(t, stored)
					update := registrytest.Modified(current, func(o runtime.Object) {
						k.parts(o).template.Spec.Containers[0].Image = "nginx:1.26"
						o.(metav1.Object).SetLabels(map[string]string{"team": "b"})
					})
					switch o := update.(type) {
					case *appsv1.Deployment:
						o.Status = appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
					case *appsv1.StatefulSet:
						o.Status = appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
					case *appsv1.DaemonSet:
						o.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, NumberReady: 3, ObservedGeneration: 1}
					case *appsv1.ReplicaSet:
						o.Status = appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
					}
					var updater rest.Updater = s.store
					if viaStatus {
						updater = s.status
					}
					out, created, err := updater.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
					if err != nil {
						t.Fatalf("Update: got error %v, want none", err)
					}
					if created {
						t.Errorf("Update created: got true, want false")
					}
					wantImage, wantLabels, wantStatus, wantGeneration := "nginx:1.26", map[string]string{"team": "b"}, statusOf(current), int64(2)
					if viaStatus {
						wantImage, wantLabels, wantStatus, wantGeneration = "nginx:1.25", map[string]string{"team": "a"}, statusOf(update), 1
					}
					if got := k.parts(out).template.Spec.Containers[0].Image; got != wantImage {
						t.Errorf("image: got %q, want %q", got, wantImage)
					}
					if diff := cmp.Diff(wantLabels, out.(metav1.Object).GetLabels()); diff != "" {
						t.Errorf("labels (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(wantStatus, statusOf(out)); diff != "" {
						t.Errorf("status (-want +got):\n%s", diff)
					}
					if got := out.(metav1.Object).GetGeneration(); got != wantGeneration {
						t.Errorf("generation: got %d, want %d", got, wantGeneration)
					}
				})
			}
		})
	}
}

func TestScaleSubresource(t *testing.T) {
	for _, k := range kinds {
		if !k.scale {
			continue
		}
		t.Run(k.resource, func(t *testing.T) {
			s := newStores(t, k.resource)
			stored := k.valid()
			k.status(stored) // status.replicas 2
			current := s.seed(t, stored)
			m := current.(metav1.Object)

			got, err := s.scale.Get(nsContext, "web", &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get scale: got error %v, want none", err)
			}
			want := &autoscalingv1.Scale{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: m.GetResourceVersion()},
				Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
				Status:     autoscalingv1.ScaleStatus{Replicas: 2, Selector: "app=web"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("scale (-want +got):\n%s", diff)
			}

			scale := got.(*autoscalingv1.Scale).DeepCopy()
			scale.Spec.Replicas = 5
			out, created, err := s.scale.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update scale: got error %v, want none", err)
			}
			if created {
				t.Errorf("Update scale created: got true, want false")
			}
			if got := out.(*autoscalingv1.Scale).Spec.Replicas; got != 5 {
				t.Errorf("returned scale's replicas: got %d, want 5", got)
			}
			obj, err := s.store.Get(nsContext, "web", &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get: got error %v, want none", err)
			}
			if got := *k.parts(obj).replicas; got == nil || *got != 5 {
				t.Errorf("spec.replicas after the scale: got %v, want 5", got)
			}
			if got := obj.(metav1.Object).GetGeneration(); got != 2 {
				t.Errorf("generation after the scale: got %d, want 2", got)
			}
			if diff := cmp.Diff(statusOf(current), statusOf(obj)); diff != "" {
				t.Errorf("status after the scale (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(*k.parts(current).template, *k.parts(obj).template); diff != "" {
				t.Errorf("template after the scale (-want +got):\n%s", diff)
			}

			errTests := []struct {
				name   string
				mutate func(*autoscalingv1.Scale)
				check  func(error) bool
				want   string
			}{
				{name: "negative replicas", mutate: func(s *autoscalingv1.Scale) { s.Spec.Replicas = -1 }, check: apierrors.IsInvalid, want: "Invalid"},
				{name: "stale resourceVersion", mutate: func(s *autoscalingv1.Scale) { s.ResourceVersion = "1" }, check: apierrors.IsConflict, want: "Conflict"},
				{name: "other object's UID", mutate: func(s *autoscalingv1.Scale) { s.UID = "uid-2" }, check: apierrors.IsConflict, want: "Conflict"},
			}
			for _, tt := range errTests {
				t.Run(tt.name, func(t *testing.T) {
					latest, err := s.scale.Get(nsContext, "web", &metav1.GetOptions{})
					if err != nil {
						t.Fatalf("Get scale: got error %v, want none", err)
					}
					scale := latest.(*autoscalingv1.Scale).DeepCopy()
					scale.Spec.Replicas = 7
					tt.mutate(scale)
					_, _, err = s.scale.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
					if !tt.check(err) {
						t.Fatalf("Update scale: got error %v, want %s", err, tt.want)
					}
					obj, err := s.store.Get(nsContext, "web", &metav1.GetOptions{})
					if err != nil {
						t.Fatalf("Get: got error %v, want none", err)
					}
					if got := *k.parts(obj).replicas; got == nil || *got != 5 {
						t.Errorf("spec.replicas after a failed scale: got %v, want 5", got)
					}
				})
			}
		})
	}
}

func TestScaleOfMissingObject(t *testing.T) {
	s := newStores(t, "deployments")
	if _, err := s.scale.Get(nsContext, "web", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get scale of a missing deployment: got error %v, want NotFound", err)
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	_, _, err := s.scale.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, true, &metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Update scale of a missing deployment (forceAllowCreate): got error %v, want NotFound", err)
	}
	if _, ok := s.mem.Stored("/deployments/default/web"); ok {
		t.Errorf("deployment after a scale of a missing one: got stored, want none")
	}
}
