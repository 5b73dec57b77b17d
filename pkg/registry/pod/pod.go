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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/api/qos"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Storage is the storage of pods and of the subresources that need
// nothing but the pods: pods/status, pods/ephemeralcontainers,
// pods/resize, pods/binding and the legacy bindings. The others
// (eviction, log, the streams) are made over Pods by whoever has what
// they also need.
type Storage struct {
	Pods                *registry.REST
	Status              *registry.StatusREST
	EphemeralContainers *SpecREST
	Resize              *SpecREST
	Binding             *BindingREST
	LegacyBinding       *LegacyBindingREST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{
		"pods": s.Pods, "pods/status": s.Status, "pods/ephemeralcontainers": s.EphemeralContainers, "pods/resize": s.Resize,
		"pods/binding": s.Binding, "bindings": s.LegacyBinding,
	}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of pods and of the subresources Storage lists.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	s := registry.NewStrategy(true)
	s.OnCreate = func(obj runtime.Object) {
		p := obj.(*corev1.Pod)
		DropDisabledFields(&p.Spec, nil)
		p.Generation = 1
		p.Status = corev1.PodStatus{Phase: corev1.PodPending}
		defaultPodLevelResources(p)
		p.Status.QOSClass = qos.ComputePodQOS(p)
		if len(p.Spec.SchedulingGates) > 0 {
			setCondition(&p.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonSchedulingGated, Message: "Scheduling is blocked due to non-empty scheduling gates"})
		}
		mergeLabelKeys(p)
	}
	s.OnCreateRequest = applyAppArmorVersionSkew
	s.OnUpdate = func(obj, old runtime.Object) {
		p, oldP := obj.(*corev1.Pod), old.(*corev1.Pod)
		p.Status = oldP.Status
		if p.Spec.Resources == nil && oldP.Spec.Resources != nil { // a client unaware of pod-level resources
			p.Spec.Resources = oldP.Spec.Resources.DeepCopy()
		}
		DropDisabledFields(&p.Spec, &oldP.Spec)
		countGeneration(p, oldP)
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		p := obj.(*corev1.Pod)
		spec := &p.Spec
		errs := validatePodMetadataAndSpec(p, false)
		if len(spec.EphemeralContainers) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "ephemeralContainers"), "cannot be set on create"))
		}
		if spec.NodeName != "" && len(spec.SchedulingGates) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "nodeName"), "cannot be set until all schedulingGates have been cleared"))
		}
		errs = append(errs, validateSeccompMatch(p.Annotations, spec, field.NewPath("spec"))...)
		return append(errs, validateAppArmorMatch(p.Annotations, spec, field.NewPath("spec"))...)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		p, oldP := obj.(*corev1.Pod), old.(*corev1.Pod)
		errs := validatePodMetadataAndSpec(p, invalidCost(oldP))
		errs = append(errs, annotationChanges(p, oldP)...)
		return append(errs, validatePodSpecUpdate(&p.Spec, &oldP.Spec)...)
	}
	s.Warnings = func(obj, old runtime.Object) []string {
		if old != nil { // upstream spares a pod's updates, a busy path, the cost
			return nil
		}
		return Warnings(obj.(*corev1.Pod))
	}
	s.ResetFields = registry.Fieldpaths("v1", "status")

	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:    corev1.Resource("pods"),
		Singular:    "pod",
		ShortNames:  []string{"po"},
		Categories:  []string{"all"},
		New:         func() runtime.Object { return &corev1.Pod{} },
		NewList:     func() runtime.Object { return &corev1.PodList{} },
		Strategy:    s,
		Fields:      func(obj runtime.Object) fields.Set { return api.PodFields(obj.(*corev1.Pod)) },
		IndexFields: []string{"spec.nodeName"},
		Table:       table,
	})
	if err != nil {
		return nil, err
	}

	status := registry.NewStrategy(true)
	status.OnUpdate = func(obj, old runtime.Object) {
		p, oldP := obj.(*corev1.Pod), old.(*corev1.Pod)
		p.Spec = oldP.Spec
		p.DeletionTimestamp = oldP.DeletionTimestamp
		p.OwnerReferences = oldP.OwnerReferences
	}
	status.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateStatusUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
	}
	status.Warnings = func(obj, _ runtime.Object) []string { return statusWarnings(&obj.(*corev1.Pod).Status) }
	status.ResetFields = registry.Fieldpaths("v1", "spec", "metadata.deletionTimestamp", "metadata.ownerReferences")
	binding := &BindingREST{store: store.Store}
	return &Storage{
		Pods:                store,
		Status:              registry.NewStatusREST(store, status),
		EphemeralContainers: newSpecREST(store, ephemeralContainersStrategy(s)),
		Resize:              newSpecREST(store, resizeStrategy(s)),
		Binding:             binding,
		LegacyBinding:       &LegacyBindingREST{binding: binding},
	}, nil
}
