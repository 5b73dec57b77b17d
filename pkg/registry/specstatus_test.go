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

package registry

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
)

func deployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: "web", UID: "uid-1", ResourceVersion: "5", Generation: 3,
			Labels: map[string]string{"app": "web"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.25"}}},
			},
		},
		Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2, ObservedGeneration: 3},
	}
}

func withDeployment(mutate func(d *appsv1.Deployment)) *appsv1.Deployment {
	d := deployment()
	mutate(d)
	return d
}

// hookCalls records the base strategy's hooks, and what they saw.
type hookCalls struct {
	created, updated []string
}

func recordingBase(calls *hookCalls) Strategy {
	base := NewStrategy(true)
	base.ValidateName = func(string, bool) []string { return []string{"base's name check"} }
	base.OnCreate = func(obj runtime.Object) {
		d := obj.(*appsv1.Deployment)
		// The base hook runs after status is cleared and generation set.
		calls.created = append(calls.created, fmt.Sprintf("status cleared: %v, generation %d", cmp.Equal(appsv1.DeploymentStatus{}, d.Status), d.Generation))
	}
	base.OnUpdate = func(obj, old runtime.Object) {
		calls.updated = append(calls.updated, obj.(*appsv1.Deployment).Name)
	}
	base.ValidateFields = func(runtime.Object) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, "base's create check")}
	}
	base.ValidateFieldsUpdate = func(runtime.Object, runtime.Object) field.ErrorList {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, "base's update check")}
	}
	return base
}

func TestSpecAndStatusCreate(t *testing.T) {
	tests := []struct {
		name           string
		generation     bool
		wantGeneration int64
	}{
		{name: "with generation", generation: true, wantGeneration: 1},
		{name: "without generation", generation: false, wantGeneration: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls hookCalls
			main, status := SpecAndStatus{GroupVersion: "apps/v1", Generation: tt.generation}.Strategies(recordingBase(&calls))
			d := deployment()
			main.PrepareForCreate(context.Background(), d)
			if diff := cmp.Diff(appsv1.DeploymentStatus{}, d.Status); diff != "" {
				t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
			}
			if d.Generation != tt.wantGeneration {
				t.Errorf("generation after PrepareForCreate: got %d, want %d", d.Generation, tt.wantGeneration)
			}
			if diff := cmp.Diff(deployment().Spec, d.Spec); diff != "" {
				t.Errorf("spec after PrepareForCreate (-want +got):\n%s", diff)
			}
			want := []string{fmt.Sprintf("status cleared: true, generation %d", tt.wantGeneration)}
			if diff := cmp.Diff(want, calls.created); diff != "" {
				t.Errorf("base OnCreate calls, with what each saw (-want +got):\n%s", diff)
			}
			// The status endpoint never creates.
			if status.OnCreate != nil {
				t.Errorf("status OnCreate: got a hook, want none")
			}
		})
	}
}

func TestSpecAndStatusUpdate(t *testing.T) {
	newStatus := appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 5, ObservedGeneration: 4}
	tests := []struct {
		name           string
		generation     bool
		mutate         func(d *appsv1.Deployment)
		wantGeneration int64
	}{
		{name: "nothing changed", generation: true, mutate: func(*appsv1.Deployment) {}, wantGeneration: 3},
		{name: "labels changed", generation: true, mutate: func(d *appsv1.Deployment) { d.Labels = nil }, wantGeneration: 3},
		{name: "status changed", generation: true, mutate: func(d *appsv1.Deployment) { d.Status = newStatus }, wantGeneration: 3},
		{name: "spec changed", generation: true, mutate: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](4) }, wantGeneration: 4},
		{
			name:       "spec equal but for an empty vs nil map",
			generation: true,
			mutate:     func(d *appsv1.Deployment) { d.Spec.Template.Annotations = map[string]string{} },
			// Semantic equality: an empty map is no change.
			wantGeneration: 3,
		},
		{name: "spec changed, no generation", generation: false, mutate: func(d *appsv1.Deployment) { d.Spec.Paused = true }, wantGeneration: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls hookCalls
			main, _ := SpecAndStatus{GroupVersion: "apps/v1", Generation: tt.generation}.Strategies(recordingBase(&calls))
			old := deployment()
			obj := withDeployment(func(d *appsv1.Deployment) {
				d.Status = newStatus
				tt.mutate(d)
			})
			wantSpec := obj.Spec.DeepCopy()
			main.PrepareForUpdate(context.Background(), obj, old)
			if diff := cmp.Diff(deployment().Status, obj.Status); diff != "" {
				t.Errorf("status after PrepareForUpdate (-want old +got):\n%s", diff)
			}
			if diff := cmp.Diff(*wantSpec, obj.Spec); diff != "" {
				t.Errorf("spec after PrepareForUpdate (-want +got):\n%s", diff)
			}
			if obj.Generation != tt.wantGeneration {
				t.Errorf("generation after PrepareForUpdate: got %d, want %d", obj.Generation, tt.wantGeneration)
			}
			if diff := cmp.Diff([]string{"web"}, calls.updated); diff != "" {
				t.Errorf("base OnUpdate calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(deployment(), old); diff != "" {
				t.Errorf("old object after PrepareForUpdate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSpecAndStatusStatusUpdate(t *testing.T) {
	newStatus := appsv1.DeploymentStatus{Replicas: 5, ReadyReplicas: 5, ObservedGeneration: 4}
	tests := []struct {
		name        string
		keepLabels  bool
		wantLabels  map[string]string
		wantResetTo []string
	}{
		{name: "labels kept", keepLabels: true, wantLabels: map[string]string{"app": "web"}, wantResetTo: []string{"spec", "metadata.labels"}},
		{name: "labels may change", keepLabels: false, wantLabels: map[string]string{"app": "web", "new": "label"}, wantResetTo: []string{"spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls hookCalls
			_, status := SpecAndStatus{GroupVersion: "apps/v1", Generation: true, StatusKeepsLabels: tt.keepLabels}.Strategies(recordingBase(&calls))
			old := deployment()
			obj := withDeployment(func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](10)
				d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
				d.Labels = map[string]string{"app": "web", "new": "label"}
				d.Annotations = map[string]string{"note": "kept"}
				d.Status = newStatus
			})
			status.PrepareForUpdate(context.Background(), obj, old)
			if diff := cmp.Diff(deployment().Spec, obj.Spec); diff != "" {
				t.Errorf("spec after a status update (-want old +got):\n%s", diff)
			}
			if diff := cmp.Diff(newStatus, obj.Status); diff != "" {
				t.Errorf("status after a status update (-want new +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, obj.Labels); diff != "" {
				t.Errorf("labels after a status update (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]string{"note": "kept"}, obj.Annotations); diff != "" {
				t.Errorf("annotations after a status update (-want +got):\n%s", diff)
			}
			// A status update neither bumps the generation nor runs the base's hooks.
			if obj.Generation != 3 {
				t.Errorf("generation after a status update: got %d, want 3", obj.Generation)
			}
			if len(calls.updated) != 0 {
				t.Errorf("base OnUpdate calls on a status update: got %v, want none", calls.updated)
			}
			if diff := cmp.Diff(Fieldpaths("apps/v1", tt.wantResetTo...), status.GetResetFields(), cmp.Comparer(equalSets)); diff != "" {
				t.Errorf("status reset fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpecAndStatusValidation: the main strategy keeps the base's checks;
// the status strategy keeps only the metadata checks (its spec is the old one).
func TestSpecAndStatusValidation(t *testing.T) {
	var calls hookCalls
	main, status := SpecAndStatus{GroupVersion: "apps/v1"}.Strategies(recordingBase(&calls))
	ctx := context.Background()
	tests := []struct {
		name string
		got  field.ErrorList
		want []string
	}{
		{name: "main create", got: main.Validate(ctx, deployment()), want: []string{"metadata.name: Invalid value", "spec: Invalid value"}},
		{name: "main update", got: rest.ValidateUpdate(ctx, deployment(), deployment(), main), want: []string{"spec: Invalid value"}},
		{name: "status update", got: rest.ValidateUpdate(ctx, deployment(), deployment(), status), want: []string{}},
		{
			name: "status update of the name",
			got:  rest.ValidateUpdate(ctx, withDeployment(func(d *appsv1.Deployment) { d.Name = "other" }), deployment(), status),
			want: []string{"metadata.name: Invalid value"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, errorPaths(tt.got)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	if !main.Namespaced || !status.Namespaced {
		t.Errorf("Namespaced: got main %v, status %v, want both true (from the base)", main.Namespaced, status.Namespaced)
	}
	if diff := cmp.Diff(Fieldpaths("apps/v1", "status"), main.GetResetFields(), cmp.Comparer(equalSets)); diff != "" {
		t.Errorf("main reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Fieldpaths("apps/v1", "spec"), status.GetResetFields(), cmp.Comparer(equalSets)); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

// TestSpecAndStatusWithoutBaseHooks: a base without hooks works too.
func TestSpecAndStatusWithoutBaseHooks(t *testing.T) {
	main, status := SpecAndStatus{GroupVersion: "v1"}.Strategies(NewStrategy(true))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 2},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.0.0.10"},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.1"}}}},
	}
	created := svc.DeepCopy()
	main.PrepareForCreate(context.Background(), created)
	if diff := cmp.Diff(corev1.ServiceStatus{}, created.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if created.Generation != 2 {
		t.Errorf("generation after PrepareForCreate without Generation: got %d, want 2", created.Generation)
	}
	updated := svc.DeepCopy()
	updated.Spec.ClusterIP = "10.0.0.11"
	updated.Status = corev1.ServiceStatus{}
	status.PrepareForUpdate(context.Background(), updated, svc)
	if updated.Spec.ClusterIP != "10.0.0.10" {
		t.Errorf("clusterIP after a status update: got %q, want the old 10.0.0.10", updated.Spec.ClusterIP)
	}
	if diff := cmp.Diff(corev1.ServiceStatus{}, updated.Status); diff != "" {
		t.Errorf("status after a status update (-want +got):\n%s", diff)
	}
}

// TestWarnings: the Warnings hook answers a create (old nil) and an update
// of the main resource; the status subresource warns of nothing.
func TestWarnings(t *testing.T) {
	base := NewStrategy(true)
	if got := base.WarningsOnCreate(context.Background(), deployment()); got != nil {
		t.Errorf("no hook: got %q, want none", got)
	}
	base.Warnings = func(obj, old runtime.Object) []string {
		if old == nil {
			return []string{"create " + obj.(*appsv1.Deployment).Name}
		}
		return []string{"update of " + old.(*appsv1.Deployment).Name}
	}
	main, status := SpecAndStatus{GroupVersion: "apps/v1"}.Strategies(base)
	ctx := context.Background()
	if diff := cmp.Diff([]string{"create web"}, main.WarningsOnCreate(ctx, deployment())); diff != "" {
		t.Errorf("create warnings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"update of web"}, main.WarningsOnUpdate(ctx, deployment(), deployment())); diff != "" {
		t.Errorf("update warnings (-want +got):\n%s", diff)
	}
	if got := status.WarningsOnUpdate(ctx, deployment(), deployment()); got != nil {
		t.Errorf("status update warnings: got %q, want none", got)
	}
}
