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
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// ScaleREST serves the scale subresource (autoscaling/v1 Scale) of a type
// with spec.replicas, spec.selector (a LabelSelector, or a map) and
// status.replicas (Deployment, ReplicaSet, StatefulSet,
// ReplicationController), as upstream's ScaleREST of each: reads show
// the replicas and the selector, writes change spec.replicas only.
type ScaleREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher                  = &ScaleREST{}
	_ rest.GroupVersionKindProvider = &ScaleREST{}
)

// NewScaleREST returns the scale subresource of parent.
func NewScaleREST(parent *REST) *ScaleREST { return &ScaleREST{store: parent.Store} }

func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy is a no-op: the parent's store owns the storage.
func (r *ScaleREST) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider: every group serves autoscaling/v1 Scale.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return toScale(obj)
}

func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdate{name: name, resource: r.resource(), scale: objInfo},
		func(ctx context.Context, obj runtime.Object) error {
			scale, err := toScale(obj)
			if err != nil || createValidation == nil {
				return err
			}
			return createValidation(ctx, scale)
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			scale, err := toScale(obj)
			if err != nil || updateValidation == nil {
				return err
			}
			oldScale, err := toScale(old)
			if err != nil {
				return err
			}
			return updateValidation(ctx, scale, oldScale)
		}, false, options)
	if err != nil {
		return nil, false, err
	}
	scale, err := toScale(obj)
	return scale, false, err
}

// resource is the scale subresource's, as upstream names it in a conflict
// (deployments/scale).
func (r *ScaleREST) resource() schema.GroupResource {
	gr := r.store.DefaultQualifiedResource
	gr.Resource += "/scale"
	return gr
}

func (r *ScaleREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(r.store.DefaultQualifiedResource).ConvertToTable(ctx, object, tableOptions)
}

// toScale is the Scale of obj.
func toScale(obj runtime.Object) (*autoscalingv1.Scale, error) {
	spec := fieldOf(obj, "Spec")
	var selector labels.Selector
	switch s := spec.FieldByName("Selector").Interface().(type) {
	case map[string]string: // a ReplicationController's
		selector = labels.SelectorFromSet(s)
	case *metav1.LabelSelector:
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(s); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid label selector: %v", err))
		}
	}
	m := fieldOf(obj, "ObjectMeta").Interface().(metav1.ObjectMeta)
	var replicas int32
	if p := spec.FieldByName("Replicas").Interface().(*int32); p != nil {
		replicas = *p
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp},
		Spec:       autoscalingv1.ScaleSpec{Replicas: replicas},
		Status:     autoscalingv1.ScaleStatus{Replicas: int32(fieldOf(obj, "Status").FieldByName("Replicas").Int()), Selector: selector.String()},
	}, nil
}

// scaleUpdate turns an update of the Scale into one of the object: only
// spec.replicas changes, and the Scale's resourceVersion, if any, is the
// object's precondition.
type scaleUpdate struct {
	name     string
	resource schema.GroupResource // the subresource's, for a conflict
	scale    rest.UpdatedObjectInfo
}

func (u *scaleUpdate) Preconditions() *metav1.Preconditions { return u.scale.Preconditions() }

func (u *scaleUpdate) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	oldScale, err := toScale(oldObj)
	if err != nil {
		return nil, err
	}
	// The Scale's managed fields are the object's own that own
	// spec.replicas, and the Scale's after the update go back into the
	// object's, as upstream's scale subresources keep them: a manager that
	// scales owns spec.replicas (with subresource "scale"), and a later
	// server-side apply of it conflicts with that manager.
	managedFields, err := scaleHandler(ctx, oldObj)
	if err != nil {
		return nil, err
	}
	if oldScale.ManagedFields, err = managedFields.ToSubresource(); err != nil {
		return nil, err
	}
	obj, err := u.scale.UpdatedObject(ctx, oldScale)
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
	if oldMeta := fieldOf(oldObj, "ObjectMeta").Interface().(metav1.ObjectMeta); scale.UID != "" && scale.UID != oldMeta.UID {
		return nil, apierrors.NewConflict(u.resource, u.name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", scale.UID, oldMeta.UID))
	}
	updated := oldObj.DeepCopyObject()
	replicas := scale.Spec.Replicas
	fieldOf(updated, "Spec").FieldByName("Replicas").Set(reflect.ValueOf(&replicas))
	if scale.ResourceVersion != "" {
		fieldOf(updated, "ObjectMeta").FieldByName("ResourceVersion").SetString(scale.ResourceVersion)
	}
	entries, err := managedFields.ToParent(scale.ManagedFields)
	if err != nil {
		return nil, err
	}
	fieldOf(updated, "ObjectMeta").FieldByName("ManagedFields").Set(reflect.ValueOf(entries))
	return updated, nil
}

// scaleHandler converts obj's managed fields to its Scale's and back: its
// spec.replicas is the Scale's, in the group version of the request (that
// of obj's kind without one).
func scaleHandler(ctx context.Context, obj runtime.Object) (*managedfields.ScaleHandler, error) {
	var gv schema.GroupVersion
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok && info.APIVersion != "" {
		gv = schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}
	} else {
		kinds, _, err := api.Scheme.ObjectKinds(obj)
		if err != nil {
			return nil, err
		}
		gv = kinds[0].GroupVersion()
	}
	entries := fieldOf(obj, "ObjectMeta").Interface().(metav1.ObjectMeta).ManagedFields
	return managedfields.NewScaleHandler(entries, gv, managedfields.ResourcePathMappings{gv.String(): fieldpath.MakePathOrDie("spec", "replicas")}), nil
}
