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

package podtemplate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newTemplate(mutate func(*corev1.PodTemplate)) *corev1.PodTemplate {
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyAlways,
				Containers:    []corev1.Container{{Name: "app", Image: "nginx:1.25"}, {Name: "sidecar", Image: "envoy:1"}},
			},
		},
	}
	api.Scheme.Default(pt)
	if mutate != nil {
		mutate(pt)
	}
	return pt
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.PodTemplate]{
		{Name: "valid", Obj: newTemplate(nil), Want: []string{}},
		{
			Name: "no containers",
			Obj:  newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers = nil }),
			Want: []string{"template.spec.containers: Required value"},
		},
		{
			Name: "container without an image",
			Obj:  newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers[1].Image = "" }),
			Want: []string{"template.spec.containers[1].image: Required value"},
		},
		{
			Name: "duplicate container names",
			Obj:  newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers[1].Name = "app" }),
			Want: []string{"template.spec.containers[1].name: Duplicate value"},
		},
		{
			Name: "unsupported restartPolicy",
			Obj:  newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.RestartPolicy = "Sometimes" }),
			Want: []string{"template.spec.restartPolicy: Unsupported value"},
		},
		{
			Name: "invalid name",
			Obj:  newTemplate(func(pt *corev1.PodTemplate) { pt.Name = "Web!" }),
			Want: []string{"metadata.name: Invalid value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	registrytest.ValidateChanges(t, rest.CreateStrategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Change[*corev1.PodTemplate]{
		{
			// Unlike a pod's, a template's spec may change freely.
			Name: "containers may be replaced",
			Obj: newTemplate(func(pt *corev1.PodTemplate) {
				pt.Template.Spec.Containers = []corev1.Container{{Name: "other", Image: "busybox:1"}}
				pt.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
				api.Scheme.Default(pt)
			}),
			Want: []string{},
		},
		{
			Name: "the new spec is validated",
			Obj:  newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers = nil }),
			Want: []string{"template.spec.containers: Required value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	registrytest.RunChanges(t, "ValidateUpdate errors", tests, func(obj, _ *corev1.PodTemplate) []string {
		return registrytest.ErrorPaths(rest.UpdateStrategy.ValidateUpdate(context.Background(), obj, newTemplate(nil)))
	})
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	registrytest.CheckFields(t, rest, newTemplate(nil), fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "two containers", Obj: newTemplate(nil), Want: []any{"web", "app,sidecar", "nginx:1.25,envoy:1", "app=web,tier=front"}},
		{
			Name: "no labels",
			Obj: newTemplate(func(pt *corev1.PodTemplate) {
				pt.Template.Labels = nil
				pt.Template.Spec.Containers = pt.Template.Spec.Containers[:1]
			}),
			Want: []any{"web", "app", "nginx:1.25", "<none>"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	registrytest.CheckTable(t, rest, []string{"Name", "Containers", "Images", "Pod Labels"}, tests...)
}

// TestGenerationAndWarnings: as upstream, a template's create sets
// generation 1, a change of the template counts, and the template's
// warnings are given on create and on an update that counted.
func TestGenerationAndWarnings(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "podtemplates")
	created := newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{}} })
	store.CreateStrategy.PrepareForCreate(context.Background(), created)
	if created.Generation != 1 {
		t.Errorf("created generation: got %d, want 1", created.Generation)
	}
	warning := []string{`template.spec.imagePullSecrets[0].name: invalid empty name ""`}
	if diff := cmp.Diff(warning, store.CreateStrategy.WarningsOnCreate(context.Background(), created)); diff != "" {
		t.Errorf("create warnings (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name           string
		mutate         func(*corev1.PodTemplate)
		wantGeneration int64
		wantWarnings   []string
	}{
		{"labels", func(pt *corev1.PodTemplate) { pt.Labels = map[string]string{"a": "b"} }, 1, nil},
		{"template", func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers[0].Image = "nginx:1.26" }, 2, warning},
	} {
		updated := created.DeepCopy()
		tt.mutate(updated)
		store.UpdateStrategy.PrepareForUpdate(context.Background(), updated, created)
		if updated.Generation != tt.wantGeneration {
			t.Errorf("%s: generation: got %d, want %d", tt.name, updated.Generation, tt.wantGeneration)
		}
		if diff := cmp.Diff(tt.wantWarnings, store.UpdateStrategy.WarningsOnUpdate(context.Background(), updated, created)); diff != "" {
			t.Errorf("%s: warnings (-want +got):\n%s", tt.name, diff)
		}
	}
}
