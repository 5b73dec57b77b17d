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
	if mutate != nil {
		mutate(pt)
	}
	return pt
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		pt   *corev1.PodTemplate
		want []string
	}{
		{name: "valid", pt: newTemplate(nil), want: []string{}},
		{
			name: "no containers",
			pt:   newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers = nil }),
			want: []string{"template.spec.containers: Required value"},
		},
		{
			name: "container without an image",
			pt:   newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers[1].Image = "" }),
			want: []string{"template.spec.containers[1].image: Required value"},
		},
		{
			name: "duplicate container names",
			pt:   newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers[1].Name = "app" }),
			want: []string{"template.spec.containers[1].name: Duplicate value"},
		},
		{
			name: "unsupported restartPolicy",
			pt:   newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.RestartPolicy = "Sometimes" }),
			want: []string{"template.spec.restartPolicy: Unsupported value"},
		},
		{
			name: "invalid name",
			pt:   newTemplate(func(pt *corev1.PodTemplate) { pt.Name = "Web!" }),
			want: []string{"metadata.name: Invalid value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(rest.CreateStrategy.Validate(context.Background(), tt.pt))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	tests := []struct {
		name string
		pt   *corev1.PodTemplate
		want []string
	}{
		{
			// Unlike a pod's, a template's spec may change freely.
			name: "containers may be replaced",
			pt: newTemplate(func(pt *corev1.PodTemplate) {
				pt.Template.Spec.Containers = []corev1.Container{{Name: "other", Image: "busybox:1"}}
				pt.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			}),
			want: []string{},
		},
		{
			name: "the new spec is validated",
			pt:   newTemplate(func(pt *corev1.PodTemplate) { pt.Template.Spec.Containers = nil }),
			want: []string{"template.spec.containers: Required value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(rest.UpdateStrategy.ValidateUpdate(context.Background(), tt.pt, newTemplate(nil)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	registrytest.CheckFields(t, rest, newTemplate(nil), fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	tests := []struct {
		name string
		pt   *corev1.PodTemplate
		want []any
	}{
		{name: "two containers", pt: newTemplate(nil), want: []any{"web", "app,sidecar", "nginx:1.25,envoy:1", "app=web,tier=front"}},
		{
			name: "no labels",
			pt: newTemplate(func(pt *corev1.PodTemplate) {
				pt.Template.Labels = nil
				pt.Template.Spec.Containers = pt.Template.Spec.Containers[:1]
			}),
			want: []any{"web", "app", "nginx:1.25", "<none>"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "podtemplates")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := rest.ConvertToTable(context.Background(), tt.pt, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Containers", "Images", "Pod Labels"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
