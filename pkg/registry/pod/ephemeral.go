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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// SpecREST is a pods subresource that updates a part of the spec:
// pods/ephemeralcontainers or pods/resize. As upstream's, it reports no
// reset fields: the field manager records what a request sent, dropped
// or not.
type SpecREST struct {
	update *registry.StatusREST
}

var _ rest.Patcher = &SpecREST{}

// newSpecREST returns the subresource of pods that updates with strategy.
func newSpecREST(pods *registry.REST, strategy registry.Strategy) *SpecREST {
	strategy.OnCreate, strategy.CreateOnUpdate = nil, false
	return &SpecREST{update: registry.NewStatusREST(pods, strategy)}
}

func (r *SpecREST) New() runtime.Object { return &corev1.Pod{} }
func (r *SpecREST) Destroy()            {} // the pods' store owns the storage

func (r *SpecREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.update.Get(ctx, name, options)
}

func (r *SpecREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.update.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// ephemeralContainersStrategy is upstream's podEphemeralContainersStrategy:
// an update keeps all but spec.ephemeralContainers of the stored pod, and
// may add ephemeral containers, never change or remove one.
func ephemeralContainersStrategy(base registry.Strategy) registry.Strategy {
	s := base
	s.OnUpdate = func(obj, old runtime.Object) {
		p, oldP := obj.(*corev1.Pod), old.(*corev1.Pod)
		ephemeral := p.Spec.EphemeralContainers
		keepAllBut(p, oldP)
		p.Spec.EphemeralContainers = ephemeral
		DropDisabledFields(&p.Spec, &oldP.Spec)
		countGeneration(p, oldP)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateEphemeralContainersUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
	}
	return s
}

// keepAllBut makes p the stored pod old, metadata included (upstream's
// ResetObjectMetaForStatus), but for the fields its caller then sets.
func keepAllBut(p, old *corev1.Pod) {
	p.Spec, p.Status = old.Spec, old.Status
	metav1.ResetObjectMetaForStatus(&p.ObjectMeta, &old.ObjectMeta)
}

// countGeneration counts a change of the spec in metadata.generation, as
// upstream's updatePodGeneration.
func countGeneration(p, old *corev1.Pod) {
	if !apiequality.Semantic.DeepEqual(p.Spec, old.Spec) {
		p.Generation = old.Generation + 1
	}
}

// validateEphemeralContainersUpdate is upstream's
// ValidatePodEphemeralContainersUpdate: the new annotations and spec valid
// (the AppArmor and mirror pod annotations kept), not a static
// pod, and each existing ephemeral container kept unchanged (looked up by
// name: a patch does not keep their order).
func validateEphemeralContainersUpdate(p, old *corev1.Pod) field.ErrorList {
	errs := validatePodMetadataAndSpec(p, invalidCost(old))
	errs = append(errs, annotationChanges(p, old)...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := make(map[string]*corev1.EphemeralContainer, len(p.Spec.EphemeralContainers))
	for i := range p.Spec.EphemeralContainers {
		byName[p.Spec.EphemeralContainers[i].Name] = &p.Spec.EphemeralContainers[i]
	}
	specPath := field.NewPath("spec", "ephemeralContainers")
	for _, was := range old.Spec.EphemeralContainers {
		if now, ok := byName[was.Name]; !ok {
			errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", was.Name)))
		} else if !apiequality.Semantic.DeepEqual(was, *now) {
			errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", was.Name, registry.Diff(was, *now))))
		}
	}
	return errs
}
