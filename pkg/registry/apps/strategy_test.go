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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestPrepareForCreate(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).CreateStrategy
			obj := k.valid()
			k.status(obj)
			obj.(metav1.Object).SetGeneration(7)
			want := k.valid()
			strategy.PrepareForCreate(context.Background(), obj)
			if diff := cmp.Diff(statusOf(k.valid()), statusOf(obj)); diff != "" {
				t.Errorf("status after PrepareForCreate (-want empty +got):\n%s", diff)
			}
			if got := obj.(metav1.Object).GetGeneration(); got != 1 {
				t.Errorf("generation after PrepareForCreate: got %d, want 1", got)
			}
			// Nothing else changes, but a DaemonSet's template generation.
			if ds, ok := want.(*appsv1.DaemonSet); ok {
				ds.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: "1"}
			}
			obj.(metav1.Object).SetGeneration(want.(metav1.Object).GetGeneration())
			if diff := cmp.Diff(want, obj); diff != "" {
				t.Errorf("object after PrepareForCreate, but for status and generation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForUpdate(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).UpdateStrategy
			old := k.valid()
			k.status(old)
			old.(metav1.Object).SetGeneration(4)
			tests := []struct {
				name           string
				mutate         func(obj runtime.Object)
				wantGeneration int64
			}{
				{name: "no change", mutate: func(runtime.Object) {}, wantGeneration: 4},
				{
					name:           "labels change: generation kept",
					mutate:         func(obj runtime.Object) { obj.(metav1.Object).SetLabels(map[string]string{"a": "b"}) },
					wantGeneration: 4,
				},
				{
					name:           "template image changes: generation bumped",
					mutate:         func(obj runtime.Object) { k.parts(obj).template.Spec.Containers[0].Image = "nginx:1.26" },
					wantGeneration: 5,
				},
				{
					name: "template labels change: generation bumped",
					mutate: func(obj runtime.Object) {
						k.parts(obj).template.Labels = map[string]string{"app": "web", "v": "2"}
					},
					wantGeneration: 5,
				},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					obj := old.DeepCopyObject()
					// A client-written status is dropped.
					switch o := obj.(type) {
					case *appsv1.Deployment:
						o.Status = appsv1.DeploymentStatus{Replicas: 9}
					case *appsv1.StatefulSet:
						o.Status = appsv1.StatefulSetStatus{Replicas: 9}
					case *appsv1.DaemonSet:
						o.Status = appsv1.DaemonSetStatus{NumberReady: 9}
					case *appsv1.ReplicaSet:
						o.Status = appsv1.ReplicaSetStatus{Replicas: 9}
					}
					tt.mutate(obj)
					strategy.PrepareForUpdate(context.Background(), obj, old)
					if diff := cmp.Diff(statusOf(old), statusOf(obj)); diff != "" {
						t.Errorf("status after PrepareForUpdate (-want old +got):\n%s", diff)
					}
					if got := obj.(metav1.Object).GetGeneration(); got != tt.wantGeneration {
						t.Errorf("generation after PrepareForUpdate: got %d, want %d", got, tt.wantGeneration)
					}
				})
			}
		})
	}
}

// TestPrepareForUpdateReplicasBumpGeneration: a scale is a spec change.
func TestPrepareForUpdateReplicasBumpGeneration(t *testing.T) {
	for _, k := range kinds {
		if !k.scale {
			continue
		}
		t.Run(k.resource, func(t *testing.T) {
			strategy := registrytest.REST(t, NewStorage, k.resource).UpdateStrategy
			old := k.valid()
			obj := registrytest.Modified(old, func(o runtime.Object) { *k.parts(o).replicas = ptr.To[int32](5) })
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if got := obj.(metav1.Object).GetGeneration(); got != 2 {
				t.Errorf("generation after a replicas change: got %d, want 2", got)
			}
		})
	}
}

// TestDeploymentAnnotationChangeBumpsGeneration: upstream's deployment
// strategy bumps metadata.generation when annotations change too, "because
// annotations are copied from deployments to their replica sets"
// (pkg/registry/apps/deployment/strategy.go, PrepareForUpdate). The other
// workloads bump it on spec changes only.
func TestDeploymentAnnotationChangeBumpsGeneration(t *testing.T) {
	tests := []struct {
		resource       string
		wantGeneration int64
	}{
		{resource: "deployments", wantGeneration: 2},
		{resource: "statefulsets", wantGeneration: 1},
		{resource: "daemonsets", wantGeneration: 1},
		{resource: "replicasets", wantGeneration: 1},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			var k kind
			for _, k = range kinds {
				if k.resource == tt.resource {
					break
				}
			}
			strategy := registrytest.REST(t, NewStorage, tt.resource).UpdateStrategy
			old := k.valid()
			obj := registrytest.Modified(old, func(o runtime.Object) {
				o.(metav1.Object).SetAnnotations(map[string]string{"example.com/note": "x"})
			})
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if got := obj.(metav1.Object).GetGeneration(); got != tt.wantGeneration {
				t.Errorf("generation after an annotation change: got %d, want %d", got, tt.wantGeneration)
			}
		})
	}
}

// TestDaemonSetTemplateGeneration: the template generation upstream's v1
// conversion writes in an annotation, 1 on create, counting template
// changes only, never the client's.
func TestDaemonSetTemplateGeneration(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "daemonsets")
	ds := validDaemonSet()
	store.CreateStrategy.PrepareForCreate(context.Background(), ds)
	generation := func(ds *appsv1.DaemonSet) string { return ds.Annotations[appsv1.DeprecatedTemplateGeneration] }
	if got := generation(ds); got != "1" {
		t.Fatalf("on create: got %q, want 1", got)
	}
	steps := []struct {
		name   string
		mutate func(*appsv1.DaemonSet)
		want   string
	}{
		{name: "a template change", mutate: func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.Containers[0].Image = "nginx:1.26" }, want: "2"},
		{name: "another change", mutate: func(ds *appsv1.DaemonSet) { ds.Spec.MinReadySeconds = 5 }, want: "2"},
		{name: "the client's value", mutate: func(ds *appsv1.DaemonSet) { ds.Annotations[appsv1.DeprecatedTemplateGeneration] = "9" }, want: "2"},
	}
	for _, step := range steps {
		next := ds.DeepCopy()
		step.mutate(next)
		store.UpdateStrategy.PrepareForUpdate(context.Background(), next, ds)
		if got := generation(next); got != step.want {
			t.Errorf("after %s: got %q, want %s", step.name, got, step.want)
		}
		ds = next
	}
}

// TestDaemonSetStatusKeepsTemplateGeneration: a status update cannot change
// the template generation, as upstream's keeps the stored spec it is part of.
func TestDaemonSetStatusKeepsTemplateGeneration(t *testing.T) {
	seeded := validDaemonSet()
	seeded.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: "3", "team": "web"}
	ctx, storages, ds := registrytest.Seeded(t, NewStorage, "daemonsets", seeded)
	ds.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: "9", "team": "db"}
	ds.Status.DesiredNumberScheduled = 1
	got, _, err := storages["daemonsets/status"].(*registry.StatusREST).Update(ctx, ds.Name, rest.DefaultUpdatedObjectInfo(ds), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("status update: %v", err)
	}
	want := map[string]string{appsv1.DeprecatedTemplateGeneration: "3", "team": "db"}
	if diff := cmp.Diff(want, got.(*appsv1.DaemonSet).Annotations); diff != "" {
		t.Errorf("annotations after a status update (-want +got):\n%s", diff)
	}
}
