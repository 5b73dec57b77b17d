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

package replicationcontroller

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validRC() *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](3),
			Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyAlways,
					Containers:    []corev1.Container{{Name: "web", Image: "nginx:1.25"}, {Name: "log", Image: "busybox"}},
				},
			},
		},
	}
	api.Scheme.Default(rc)
	return rc
}

var nsContext = genericapirequest.WithNamespace(context.Background(), "default")

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "replicationcontrollers", "replicationcontrollers", "replicationcontrollers/scale", "replicationcontrollers/status")
	scale := storages["replicationcontrollers/scale"].(*registry.ScaleREST)
	if got, want := scale.GroupVersionKind(corev1.SchemeGroupVersion), autoscalingv1.SchemeGroupVersion.WithKind("Scale"); got != want {
		t.Errorf("scale kind: got %v, want %v", got, want)
	}
	status := storages["replicationcontrollers/status"].(*registry.StatusREST)
	store := registrytest.REST(t, NewStorage, "replicationcontrollers")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: corev1.Resource("replicationcontrollers"), Singular: "replicationcontroller", Namespaced: true, ShortNames: []string{"rc"}})
	if diff := cmp.Diff([]string{"all"}, store.Categories()); diff != "" {
		t.Errorf("Categories (-want +got):\n%s", diff)
	}
	gc, ok := store.DeleteStrategy.(rest.GarbageCollectionDeleteStrategy)
	if !ok || gc.DefaultGarbageCollectionPolicy(context.Background()) != rest.OrphanDependents {
		t.Errorf("default garbage collection policy: got %v, want OrphanDependents", store.DeleteStrategy)
	}
	registrytest.CheckSpecAndStatus(t, store, status, "v1")
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Mutation[*corev1.ReplicationController]{
		{Name: "valid", Mutate: func(*corev1.ReplicationController) {}, Want: []string{}},
		{
			Name: "negative replicas and minReadySeconds",
			Mutate: func(rc *corev1.ReplicationController) {
				rc.Spec.Replicas, rc.Spec.MinReadySeconds = ptr.To[int32](-1), -1
			},
			Want: []string{"spec.minReadySeconds: Invalid value", "spec.replicas: Invalid value"},
		},
		{Name: "no replicas", Mutate: func(rc *corev1.ReplicationController) { rc.Spec.Replicas = nil }, Want: []string{"spec.replicas: Required value"}},
		{Name: "no selector", Mutate: func(rc *corev1.ReplicationController) { rc.Spec.Selector = nil }, Want: []string{"spec.selector: Required value"}},
		{Name: "no template", Mutate: func(rc *corev1.ReplicationController) { rc.Spec.Template = nil }, Want: []string{"spec.template: Required value"}},
		{
			Name:   "selector does not match the template",
			Mutate: func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "api"} },
			Want:   []string{"spec.template.metadata.labels: Invalid value"},
		},
		{
			Name:   "invalid template label",
			Mutate: func(rc *corev1.ReplicationController) { rc.Spec.Template.Labels["bad key!"] = "x" },
			Want:   []string{"spec.template.labels: Invalid value"},
		},
		{
			Name: "restartPolicy Never",
			Mutate: func(rc *corev1.ReplicationController) {
				rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			},
			Want: []string{"spec.template.spec.restartPolicy: Unsupported value"},
		},
		{
			Name: "activeDeadlineSeconds",
			Mutate: func(rc *corev1.ReplicationController) {
				rc.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
			},
			Want: []string{"spec.template.spec.activeDeadlineSeconds: Forbidden"},
		},
		{
			Name:   "invalid pod spec",
			Mutate: func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.Containers = nil },
			Want:   []string{"spec.template.spec.containers: Required value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "replicationcontrollers")
	// Upstream has no update rule of its own (the selector may change).
	registrytest.ValidateMutationsCreateAndUpdate(t, store, registrytest.ErrorPaths, validRC, tests)
}

func TestValidateStatus(t *testing.T) {
	tests := []struct {
		name   string
		status corev1.ReplicationControllerStatus
		want   []string
	}{
		{name: "valid", status: corev1.ReplicationControllerStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 4}, want: []string{}},
		{name: "negative", status: corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: -1, AvailableReplicas: -2, ObservedGeneration: -1}, want: []string{
			"status.availableReplicas: Invalid value", "status.observedGeneration: Invalid value", "status.readyReplicas: Invalid value"}},
		{
			name:   "more than status.replicas",
			status: corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 3},
			want: []string{
				"status.availableReplicas: Invalid value", "status.availableReplicas: Invalid value",
				"status.fullyLabeledReplicas: Invalid value", "status.readyReplicas: Invalid value",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, registrytest.ErrorPaths(validateStatus(&tt.status))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	rc := registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) {
		rc.Generation = 4
		rc.Status = corev1.ReplicationControllerStatus{Replicas: 3}
	})
	registrytest.REST(t, NewStorage, "replicationcontrollers").CreateStrategy.PrepareForCreate(context.Background(), rc)
	if diff := cmp.Diff(corev1.ReplicationControllerStatus{}, rc.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if rc.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", rc.Generation)
	}
}

func newStores(t *testing.T) (*registrytest.MemStorage, map[string]rest.Storage) {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("replicationcontrollers"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	return mem, storages
}

func seed(t *testing.T, mem *registrytest.MemStorage, storages map[string]rest.Storage, rc *corev1.ReplicationController) *corev1.ReplicationController {
	t.Helper()
	key, err := storages["replicationcontrollers"].(*registry.REST).KeyFunc(nsContext, rc.Name)
	if err != nil {
		t.Fatalf("KeyFunc: %v", err)
	}
	return mem.Seed(t, key, rc).(*corev1.ReplicationController)
}

// TestUpdateThroughStores runs updates through the generic stores of
// replicationcontrollers and of replicationcontrollers/status.
func TestUpdateThroughStores(t *testing.T) {
	newStatus := corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 3, ObservedGeneration: 1}
	tests := []struct {
		name           string
		status         bool
		wantImage      string
		wantGeneration int64
		wantStatus     corev1.ReplicationControllerStatus
	}{
		{name: "main: spec changes, generation counts, status kept", wantImage: "nginx:1.26", wantGeneration: 2},
		{name: "status: status changes, spec kept", status: true, wantImage: "nginx:1.25", wantGeneration: 1, wantStatus: newStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, storages := newStores(t)
			current := seed(t, mem, storages, registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) { rc.Generation = 1 }))
			update := registrytest.Modified(current, func(rc *corev1.ReplicationController) {
				rc.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
				rc.Status = newStatus
			})
			updater := storages["replicationcontrollers"].(rest.Updater)
			if tt.status {
				updater = storages["replicationcontrollers/status"].(rest.Updater)
			}
			out, _, err := updater.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*corev1.ReplicationController)
			if image := got.Spec.Template.Spec.Containers[0].Image; image != tt.wantImage {
				t.Errorf("image: got %q, want %q", image, tt.wantImage)
			}
			if got.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", got.Generation, tt.wantGeneration)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("status: invalid status", func(t *testing.T) {
		mem, storages := newStores(t)
		current := seed(t, mem, storages, validRC())
		update := registrytest.Modified(current, func(rc *corev1.ReplicationController) { rc.Status.ReadyReplicas = 2 })
		_, _, err := storages["replicationcontrollers/status"].(rest.Updater).Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(update),
			rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("Update: got error %v, want Invalid (readyReplicas above replicas)", err)
		}
	})
}

func TestScaleSubresource(t *testing.T) {
	mem, storages := newStores(t)
	current := seed(t, mem, storages, registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) {
		rc.Generation = 1
		rc.Status.Replicas = 2
	}))
	scaleREST := storages["replicationcontrollers/scale"].(*registry.ScaleREST)
	store := storages["replicationcontrollers"].(*registry.REST)

	got, err := scaleREST.Get(nsContext, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get scale: got error %v, want none", err)
	}
	want := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: current.ResourceVersion},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
		Status:     autoscalingv1.ScaleStatus{Replicas: 2, Selector: "app=web"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("scale (-want +got):\n%s", diff)
	}

	scale := got.(*autoscalingv1.Scale).DeepCopy()
	scale.Spec.Replicas = 5
	out, _, err := scaleREST.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("Update scale: got error %v, want none", err)
	}
	if got := out.(*autoscalingv1.Scale).Spec.Replicas; got != 5 {
		t.Errorf("returned scale's replicas: got %d, want 5", got)
	}
	obj, err := store.Get(nsContext, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get: got error %v, want none", err)
	}
	rc := obj.(*corev1.ReplicationController)
	if rc.Spec.Replicas == nil || *rc.Spec.Replicas != 5 {
		t.Errorf("spec.replicas after the scale: got %v, want 5", rc.Spec.Replicas)
	}
	if rc.Generation != 2 {
		t.Errorf("generation after the scale: got %d, want 2", rc.Generation)
	}
	if rc.Status.Replicas != 2 {
		t.Errorf("status.replicas after the scale: got %d, want 2", rc.Status.Replicas)
	}

	errTests := []struct {
		name   string
		mutate func(*autoscalingv1.Scale)
		check  func(error) bool
	}{
		{name: "negative replicas", mutate: func(s *autoscalingv1.Scale) { s.Spec.Replicas = -1 }, check: apierrors.IsInvalid},
		{name: "stale resourceVersion", mutate: func(s *autoscalingv1.Scale) { s.ResourceVersion = "1" }, check: apierrors.IsConflict},
		{name: "other object's name", mutate: func(s *autoscalingv1.Scale) { s.Name = "api" }, check: apierrors.IsInvalid},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			latest, err := scaleREST.Get(nsContext, "web", &metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get scale: got error %v, want none", err)
			}
			scale := latest.(*autoscalingv1.Scale).DeepCopy()
			scale.Spec.Replicas = 7
			tt.mutate(scale)
			if _, _, err := scaleREST.Update(nsContext, "web", rest.DefaultUpdatedObjectInfo(scale), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); !tt.check(err) {
				t.Fatalf("Update scale: got error %v", err)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "replicationcontrollers")
	rc := registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) { rc.Status.Replicas = 2 })
	registrytest.CheckFields(t, store, rc, fields.Set{"metadata.name": "web", "metadata.namespace": "default", "status.replicas": "2"})
	p := store.PredicateFunc(labels.Everything(), fields.OneTermEqualSelector("status.replicas", "2"))
	if ok, err := p.Matches(rc); err != nil || !ok {
		t.Errorf("status.replicas=2 matches: got %v, %v; want true", ok, err)
	}
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{
			Name: "running",
			Obj:  registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) { rc.Status.Replicas, rc.Status.ReadyReplicas = 3, 2 }),
			Want: []any{"web", int64(3), int64(3), int64(2), "<unknown>", "web,log", "nginx:1.25,busybox", "app=web"},
		},
		{
			Name: "no template, no replicas",
			Obj:  registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) { rc.Spec.Template, rc.Spec.Replicas = nil, nil }),
			Want: []any{"web", int64(0), int64(0), int64(0), "<unknown>", "", "", "app=web"},
		},
	}
	store := registrytest.REST(t, NewStorage, "replicationcontrollers")
	registrytest.CheckTable(t, store, []string{"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"}, tests...)
}

// TestWarnings: as kube-apiserver 1.37, a create warns of the name and the
// template; an update that counts a generation warns of the template it
// replaces (upstream passes the stored one), not of the new one.
func TestWarnings(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "replicationcontrollers")
	emptySecret := func(rc *corev1.ReplicationController) {
		rc.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}}
	}
	warning := []string{`spec.template.spec.imagePullSecrets[0].name: invalid empty name ""`}
	created := registrytest.Modified(validRC(), func(rc *corev1.ReplicationController) { rc.Name = "web.v1"; emptySecret(rc) })
	clean := validRC()
	registrytest.CheckWarnings(t, store, []registrytest.WarningCase{
		{Name: "create", Obj: created, Want: append([]string{"metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"}, warning...)},
		{Name: "the old template warned of", Obj: registrytest.Modified(created, func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.ImagePullSecrets = nil }), Old: created, Want: warning},
		{Name: "the new one not", Obj: registrytest.Modified(clean, emptySecret), Old: clean},
		{Name: "no generation counted", Obj: registrytest.Modified(created, func(rc *corev1.ReplicationController) { rc.Labels = map[string]string{"a": "b"} }), Old: created},
	})
}
