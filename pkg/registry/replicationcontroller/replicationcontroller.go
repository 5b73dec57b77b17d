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
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// NewStorage returns the storage of replicationcontrollers and their
// status and scale subresources.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(true)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(&obj.(*corev1.ReplicationController).Spec)
	}
	base.Warnings = func(obj, old runtime.Object) []string {
		rc := obj.(*corev1.ReplicationController)
		if old == nil {
			return append(pod.NameWarnings(rc.Name), pod.TemplateWarnings(specPath.Child("template"), rc.Spec.Template)...)
		}
		oldRC := old.(*corev1.ReplicationController)
		if rc.Generation == oldRC.Generation {
			return nil
		}
		// Upstream passes the stored template where the new one belongs:
		// an update warns of what it replaces.
		return pod.TemplateWarnings(specPath.Child("template"), oldRC.Spec.Template)
	}
	main, status := registry.SpecAndStatus{GroupVersion: "v1", Generation: true, Drop: pod.TemplateDropper(func(obj runtime.Object) *corev1.PodTemplateSpec {
		return obj.(*corev1.ReplicationController).Spec.Template
	})}.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateStatus(&obj.(*corev1.ReplicationController).Status)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("replicationcontrollers"),
		Singular:   "replicationcontroller",
		ShortNames: []string{"rc"},
		Categories: []string{"all"},
		New:        func() runtime.Object { return &corev1.ReplicationController{} },
		NewList:    func() runtime.Object { return &corev1.ReplicationControllerList{} },
		Strategy:   main,
		Fields: func(obj runtime.Object) fields.Set {
			return api.ReplicationControllerFields(obj.(*corev1.ReplicationController))
		},
		Table: table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"replicationcontrollers":        store,
		"replicationcontrollers/status": registry.NewStatusREST(store, status),
		"replicationcontrollers/scale":  registry.NewScaleREST(store),
	}, nil
}

var rcDocs, rcStatusDocs = corev1.ReplicationControllerSpec{}.SwaggerDoc(), corev1.ReplicationControllerStatus{}.SwaggerDoc()

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Desired", Type: "integer", Description: rcDocs["replicas"]},
		{Name: "Current", Type: "integer", Description: rcStatusDocs["replicas"]},
		{Name: "Ready", Type: "integer", Description: rcStatusDocs["readyReplicas"]},
		registry.AgeColumn,
		registry.ContainersColumn, registry.ImagesColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: rcDocs["selector"]},
	},
	Cells: func(obj runtime.Object) []any {
		rc := obj.(*corev1.ReplicationController)
		var desired int64
		if rc.Spec.Replicas != nil {
			desired = int64(*rc.Spec.Replicas)
		}
		containers, images := "", ""
		if rc.Spec.Template != nil {
			containers, images = registry.ContainersAndImages(rc.Spec.Template)
		}
		return []any{rc.Name, desired, int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), registry.Age(rc.CreationTimestamp),
			containers, images, labels.FormatLabels(rc.Spec.Selector)}
	},
}

var specPath = field.NewPath("spec")

// validateSpec is upstream's ValidateReplicationControllerSpec: a
// selector that matches the template's labels, a valid template that
// restarts always, replicas and minReadySeconds not negative. Upstream's
// declarative validation reports the last two, after the rest.
func validateSpec(spec *corev1.ReplicationControllerSpec) field.ErrorList {
	var errs field.ErrorList
	selector := labels.Set(spec.Selector).AsSelector()
	if selector.Empty() {
		errs = append(errs, field.Required(specPath.Child("selector"), ""))
	}
	errs = append(errs, validateTemplate(spec.Template, selector)...)
	if spec.Replicas == nil {
		errs = append(errs, field.Required(specPath.Child("replicas"), ""))
	} else {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.Replicas), specPath.Child("replicas"))...)
	}
	return append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), specPath.Child("minReadySeconds"))...)
}

// validateTemplate is upstream's ValidatePodTemplateSpecForRC.
func validateTemplate(t *corev1.PodTemplateSpec, selector labels.Selector) field.ErrorList {
	tp := specPath.Child("template")
	if t == nil {
		return field.ErrorList{field.Required(tp, "")}
	}
	var errs field.ErrorList
	if !selector.Empty() && !selector.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, pod.ValidatePodTemplateSpec(t, tp)...)
	if rp := t.Spec.RestartPolicy; rp != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// validateStatus is upstream's ValidateReplicationControllerStatus.
func validateStatus(status *corev1.ReplicationControllerStatus) field.ErrorList {
	p := field.NewPath("status")
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"replicas", int64(status.Replicas)}, {"fullyLabeledReplicas", int64(status.FullyLabeledReplicas)},
		{"readyReplicas", int64(status.ReadyReplicas)}, {"availableReplicas", int64(status.AvailableReplicas)},
		{"observedGeneration", status.ObservedGeneration},
	} {
		errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(f.value, p.Child(f.name))...)
	}
	const msg = "cannot be greater than status.replicas"
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"fullyLabeledReplicas", status.FullyLabeledReplicas}, {"readyReplicas", status.ReadyReplicas}, {"availableReplicas", status.AvailableReplicas},
	} {
		if f.value > status.Replicas {
			errs = append(errs, field.Invalid(p.Child(f.name), f.value, msg))
		}
	}
	if status.AvailableReplicas > status.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), status.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}
