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
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// NewStorage returns the storage of podtemplates.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.OnCreate = func(obj runtime.Object) {
		t := obj.(*corev1.PodTemplate)
		pod.DropDisabledTemplateFields(&t.Template, nil)
		t.Generation = 1
	}
	s.OnUpdate = func(obj, old runtime.Object) { // a change of the template is counted
		t, oldT := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
		pod.DropDisabledTemplateFields(&t.Template, &oldT.Template)
		if !apiequality.Semantic.DeepEqual(t.Template, oldT.Template) {
			t.Generation = oldT.Generation + 1
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return pod.ValidatePodTemplateSpec(&obj.(*corev1.PodTemplate).Template, field.NewPath("template"))
	}
	s.Warnings = func(obj, old runtime.Object) []string {
		t := obj.(*corev1.PodTemplate)
		if old != nil && t.Generation == old.(*corev1.PodTemplate).Generation {
			return nil
		}
		return pod.TemplateWarnings(field.NewPath("template"), &t.Template)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: corev1.Resource("podtemplates"),
		Singular: "podtemplate",
		New:      func() runtime.Object { return &corev1.PodTemplate{} },
		NewList:  func() runtime.Object { return &corev1.PodTemplateList{} },
		Strategy: s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
				{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
				{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
			},
			Cells: func(obj runtime.Object) []any {
				pt := obj.(*corev1.PodTemplate)
				containers, images := registry.ContainersAndImages(&pt.Template)
				return []any{pt.Name, containers, images, labels.FormatLabels(pt.Template.Labels)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"podtemplates": store}, nil
}
