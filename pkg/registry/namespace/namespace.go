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

package namespace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// REST is the namespaces storage; Delete follows upstream's two-phase
// deletion. As upstream's, it has no DeleteCollection (DELETE
// /api/v1/namespaces is a 405), and the OpenAPI says a DELETE answers a
// Status (it answers the namespace): see hidden.
type REST struct {
	*registry.REST
	hidden
}

// hidden hides registry.REST's DeleteCollection and the store's
// DeleteReturnsDeletedObject from REST: its own, at the same depths as
// theirs, make the methods ambiguous, so neither is promoted. REST is no
// rest.CollectionDeleter (the API installer serves no deletecollection
// for namespaces) and no rest.MayReturnFullObjectDeleter (upstream's REST
// is neither: its store is a field).
type hidden struct{ storeMethods }

type storeMethods struct{}

func (hidden) DeleteCollection(context.Context, rest.ValidateObjectFunc, *metav1.DeleteOptions, *metainternalversion.ListOptions) (runtime.Object, error) {
	panic("unreachable: hidden by registry.REST's DeleteCollection")
}

func (storeMethods) DeleteReturnsDeletedObject() bool {
	panic("unreachable: hidden by the store's DeleteReturnsDeletedObject")
}

// NewStorage returns the storage of namespaces, namespaces/status and namespaces/finalize.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.ValidateName = apimachineryvalidation.ValidateNamespaceName
	s.OnCreate = func(obj runtime.Object) {
		ns := obj.(*corev1.Namespace)
		ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
		if !hasFinalizer(ns) {
			ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
		}
	}
	s.OnUpdate = func(obj, old runtime.Object) {
		ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
		ns.Spec.Finalizers = oldNS.Spec.Finalizers
		ns.Status = oldNS.Status
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateFinalizers(obj.(*corev1.Namespace), false) }
	s.ResetFields = registry.Fieldpaths("v1", "status")

	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("namespaces"),
		Singular:   "namespace",
		ShortNames: []string{"ns"},
		New:        func() runtime.Object { return &corev1.Namespace{} },
		NewList:    func() runtime.Object { return &corev1.NamespaceList{} },
		Strategy:   s,
		Fields:     func(obj runtime.Object) fields.Set { return api.NamespaceFields(obj.(*corev1.Namespace)) },
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{registry.NameColumn, {Name: "Status", Type: "string", Description: "The phase of the namespace."}, registry.AgeColumn},
			Cells: func(obj runtime.Object) []any {
				ns := obj.(*corev1.Namespace)
				return []any{ns.Name, string(ns.Status.Phase), registry.Age(ns.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	// A finalize or status update that leaves a deleted namespace without
	// finalizers removes it, as upstream's ShouldDeleteNamespaceDuringUpdate does.
	store.ShouldDeleteDuringUpdate = shouldDeleteDuringUpdate

	status := registry.NewStrategy(false)
	status.OnUpdate = func(obj, old runtime.Object) {
		ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
		ns.Spec = oldNS.Spec
	}
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList { return validateStatusUpdate(obj.(*corev1.Namespace)) }
	status.ResetFields = registry.Fieldpaths("v1", "spec")

	finalize := registry.NewStrategy(false)
	finalize.OnUpdate = func(obj, old runtime.Object) {
		ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
		ns.Status = oldNS.Status
	}
	finalize.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateFinalizers(obj.(*corev1.Namespace), true) }
	finalize.ResetFields = registry.Fieldpaths("v1", "status")

	return map[string]rest.Storage{
		"namespaces":          &REST{REST: store},
		"namespaces/status":   registry.NewStatusREST(store, status),
		"namespaces/finalize": &FinalizeREST{registry.NewStatusREST(store, finalize)},
	}, nil
}

// FinalizeREST is namespaces/finalize, which, as upstream's, takes updates
// only (no get, no patch): what the namespace controller sends.
type FinalizeREST struct {
	status *registry.StatusREST
}

var (
	_ rest.Updater             = &FinalizeREST{}
	_ rest.ResetFieldsStrategy = &FinalizeREST{}
)

func (r *FinalizeREST) New() runtime.Object { return r.status.New() }
func (r *FinalizeREST) Destroy()            {}

// Update implements rest.Updater.
func (r *FinalizeREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions,
) (runtime.Object, bool, error) {
	return r.status.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *FinalizeREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.status.GetResetFields()
}

func hasFinalizer(ns *corev1.Namespace) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == corev1.FinalizerKubernetes {
			return true
		}
	}
	return false
}

func shouldDeleteDuringUpdate(ctx context.Context, key string, obj, existing runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return false
	}
	return len(ns.Spec.Finalizers) == 0 && genericregistry.ShouldDeleteDuringUpdate(ctx, key, obj, existing)
}

// Delete marks the namespace Terminating and returns it while spec.finalizers
// remain; once the namespace controller has finalized it, Delete removes it.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := obj.(*corev1.Namespace)
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	if options.Preconditions == nil {
		options.Preconditions = &metav1.Preconditions{}
	}
	if options.Preconditions.UID == nil {
		options.Preconditions.UID = &ns.UID
	} else if *options.Preconditions.UID != ns.UID {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *options.Preconditions.UID, ns.UID))
	}
	if rv := options.Preconditions.ResourceVersion; rv != nil && *rv != ns.ResourceVersion {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *rv, ns.ResourceVersion))
	}

	if ns.DeletionTimestamp.IsZero() {
		if err := deleteValidation(ctx, ns); err != nil {
			return nil, false, err
		}
		out := &corev1.Namespace{}
		key, err := r.KeyFunc(ctx, name)
		if err != nil {
			return nil, false, err
		}
		err = r.Storage.GuaranteedUpdate(ctx, key, out, false, &storage.Preconditions{UID: options.Preconditions.UID, ResourceVersion: options.Preconditions.ResourceVersion},
			storage.SimpleUpdate(func(existing runtime.Object) (runtime.Object, error) {
				current := existing.(*corev1.Namespace)
				if current.DeletionTimestamp.IsZero() {
					now := metav1.Now()
					current.DeletionTimestamp = &now
					current.Status.Phase = corev1.NamespaceTerminating
				}
				return current, nil
			}), false, nil)
		if err != nil {
			return nil, false, storeerr.InterpretUpdateError(err, corev1.Resource("namespaces"), name)
		}
		if len(out.Spec.Finalizers) != 0 {
			return out, false, nil
		}
		ns = out
	}
	if len(ns.Spec.Finalizers) != 0 {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("the system is ensuring all content is removed from this namespace; upon completion, this namespace will automatically be purged by the system"))
	}
	return r.REST.Delete(ctx, name, deleteValidation, options)
}
