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
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	"k8s.io/apiserver/pkg/util/dryrun"
)

// BindingREST is pods/binding, upstream's: a scheduler assigns a pod to
// a node by creating a Binding.
type BindingREST struct {
	store *registry.Store
}

var (
	_ rest.NamedCreater                   = &BindingREST{}
	_ rest.SubresourceObjectMetaPreserver = &BindingREST{}
	_ rest.SingularNameProvider           = &BindingREST{}
	_ rest.Creater                        = &LegacyBindingREST{}
	_ rest.SingularNameProvider           = &LegacyBindingREST{}
	_ rest.SubresourceObjectMetaPreserver = &LegacyBindingREST{}
)

func (r *BindingREST) New() runtime.Object     { return &corev1.Binding{} }
func (r *BindingREST) Destroy()                {} // the pods' store owns the storage
func (r *BindingREST) NamespaceScoped() bool   { return true }
func (r *BindingREST) GetSingularName() string { return "binding" }
func (r *BindingREST) PreserveRequestObjectMetaSystemFieldsOnSubresourceCreate() bool {
	return true // the Binding's uid and resourceVersion are the pod's preconditions
}

// Create binds the pod name to the Binding's target node.
func (r *BindingREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	binding, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %#v", obj))
	}
	if name != binding.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	// Upstream answers these with a 500 (an aggregate error): a 422 here.
	if errs := validateBinding(binding); len(errs) > 0 {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), binding.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, binding.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := r.assign(ctx, binding, dryrun.IsDryRun(options.DryRun)); err != nil {
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}

func validateBinding(b *corev1.Binding) field.ErrorList {
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	return errs
}

// initContainerAnnotations are the alpha and beta annotations of init
// containers, which a binding's annotations may not bring back.
var initContainerAnnotations = []string{
	"pod.beta.kubernetes.io/init-containers", "pod.alpha.kubernetes.io/init-containers",
	"pod.beta.kubernetes.io/init-container-statuses", "pod.alpha.kubernetes.io/init-container-statuses",
}

// assign sets the pod's node, if it has none and may be scheduled, with
// the binding's annotations and labels, clears its nominated node and
// marks it scheduled, as upstream's setPodNodeAndMetadata does.
func (r *BindingREST) assign(ctx context.Context, b *corev1.Binding, dryRun bool) error {
	key, err := r.store.KeyFunc(ctx, b.Name)
	if err != nil {
		return err
	}
	var preconditions *storage.Preconditions
	if b.UID != "" || b.ResourceVersion != "" {
		preconditions = &storage.Preconditions{}
		if b.UID != "" {
			preconditions.UID = &b.UID
		}
		if b.ResourceVersion != "" {
			preconditions.ResourceVersion = &b.ResourceVersion
		}
	}
	err = r.store.Storage.GuaranteedUpdate(ctx, key, &corev1.Pod{}, false, preconditions, storage.SimpleUpdate(func(obj runtime.Object) (runtime.Object, error) {
		pod := obj.(*corev1.Pod)
		switch {
		case pod.DeletionTimestamp != nil:
			return nil, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
		case pod.Spec.NodeName != "":
			return nil, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
		case len(pod.Spec.SchedulingGates) != 0:
			return nil, fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
		}
		pod.Spec.NodeName = b.Target.Name
		pod.Status.NominatedNodeName = ""
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		maps.Copy(pod.Annotations, b.Annotations)
		for _, k := range initContainerAnnotations {
			delete(pod.Annotations, k)
		}
		if len(b.Labels) > 0 {
			if pod.Labels == nil {
				pod.Labels = map[string]string{}
			}
			maps.Copy(pod.Labels, b.Labels)
		}
		setCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
		return pod, nil
	}), dryRun, nil)
	if err == nil {
		return nil
	}
	err = storeerr.InterpretGetError(err, corev1.Resource("pods"), b.Name)
	err = storeerr.InterpretUpdateError(err, corev1.Resource("pods"), b.Name)
	if _, ok := err.(*apierrors.StatusError); !ok {
		err = apierrors.NewConflict(corev1.Resource("pods/binding"), b.Name, err)
	}
	return err
}

// setCondition is upstream's UpdatePodCondition: c replaces the condition
// of its type, keeping its lastTransitionTime if its status is the same.
func setCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	c.LastTransitionTime = metav1.Now()
	for i, old := range status.Conditions {
		if old.Type == c.Type {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			status.Conditions[i] = c
			return
		}
	}
	status.Conditions = append(status.Conditions, c)
}

// LegacyBindingREST is the bindings resource, POST
// /api/v1/namespaces/{namespace}/bindings: pods/binding by another path.
type LegacyBindingREST struct {
	binding *BindingREST
}

func (r *LegacyBindingREST) New() runtime.Object     { return r.binding.New() }
func (r *LegacyBindingREST) Destroy()                {}
func (r *LegacyBindingREST) NamespaceScoped() bool   { return true }
func (r *LegacyBindingREST) GetSingularName() string { return "binding" }
func (r *LegacyBindingREST) PreserveRequestObjectMetaSystemFieldsOnSubresourceCreate() bool {
	return true
}

// Create binds the pod the Binding names.
func (r *LegacyBindingREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	b, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %#v", obj))
	}
	return r.binding.Create(ctx, b.Name, obj, createValidation, options)
}
