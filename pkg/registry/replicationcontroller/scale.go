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
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// ScaleREST serves replicationcontrollers/scale as autoscaling/v1 Scale, as
// registry.ScaleREST does for the apps types; it is its own because a
// replication controller's selector is a map, not a LabelSelector.
type ScaleREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher                  = &ScaleREST{}
	_ rest.GroupVersionKindProvider = &ScaleREST{}
)

func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy is a no-op: the parent's store owns the storage.
func (r *ScaleREST) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return toScale(obj.(*corev1.ReplicationController)), nil
}

func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdate{name: name, scale: objInfo},
		func(ctx context.Context, obj runtime.Object) error {
			if createValidation == nil {
				return nil
			}
			return createValidation(ctx, toScale(obj.(*corev1.ReplicationController)))
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			if updateValidation == nil {
				return nil
			}
			return updateValidation(ctx, toScale(obj.(*corev1.ReplicationController)), toScale(old.(*corev1.ReplicationController)))
		}, false, options)
	if err != nil {
		return nil, false, err
	}
	return toScale(obj.(*corev1.ReplicationController)), false, nil
}

func (r *ScaleREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(r.store.DefaultQualifiedResource).ConvertToTable(ctx, object, tableOptions)
}

// toScale is the Scale of rc: its replicas and its selector.
func toScale(rc *corev1.ReplicationController) *autoscalingv1.Scale {
	var replicas int32
	if rc.Spec.Replicas != nil {
		replicas = *rc.Spec.Replicas
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: rc.Name, Namespace: rc.Namespace, UID: rc.UID, ResourceVersion: rc.ResourceVersion, CreationTimestamp: rc.CreationTimestamp},
		Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
		Status:     autoscalingv1.ScaleStatus{Replicas: rc.Status.Replicas, Selector: labels.SelectorFromSet(rc.Spec.Selector).String()},
	}
}

// scaleUpdate turns an update of the Scale into one of the controller:
// only spec.replicas changes, and the Scale's resourceVersion, if any, is
// the controller's precondition.
type scaleUpdate struct {
	name  string
	scale rest.UpdatedObjectInfo
}

func (u *scaleUpdate) Preconditions() *metav1.Preconditions { return u.scale.Preconditions() }

func (u *scaleUpdate) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	old := oldObj.(*corev1.ReplicationController)
	obj, err := u.scale.UpdatedObject(ctx, toScale(old))
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an autoscaling/v1 Scale, got %T", obj))
	}
	var errs field.ErrorList
	if scale.Name != u.name {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), scale.Name, "must match the name of the object scaled"))
	}
	if scale.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), scale.Name, errs)
	}
	updated := old.DeepCopy()
	replicas := scale.Spec.Replicas
	updated.Spec.Replicas = &replicas
	if scale.ResourceVersion != "" {
		updated.ResourceVersion = scale.ResourceVersion
	}
	return updated, nil
}
