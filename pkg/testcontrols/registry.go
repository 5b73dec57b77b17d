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

package testcontrols

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"

	"github.com/miniapiserver/miniapiserver/pkg/testcontrols/v1alpha1"
)

// Storage is the REST storage of testcontrol.miniapiserver.io/v1alpha1:
// checkpoints, made, read and deleted as objects, and restored by a POST
// to their restore subresource.
func (cs *Checkpoints) Storage() map[string]rest.Storage {
	return map[string]rest.Storage{
		"checkpoints":         &checkpointsREST{cs: cs, TableConvertor: rest.NewDefaultTableConvertor(Resource)},
		"checkpoints/restore": &restoreREST{cs: cs},
	}
}

// checkpointsREST serves checkpoints from cs: they are not stored objects
// (a restore would take them back in time). Of an update, only the labels
// and annotations are kept (kubectl apply writes its annotation).
type checkpointsREST struct {
	cs *Checkpoints
	rest.TableConvertor
}

var (
	_ rest.Creater              = (*checkpointsREST)(nil)
	_ rest.Getter               = (*checkpointsREST)(nil)
	_ rest.Updater              = (*checkpointsREST)(nil)
	_ rest.Lister               = (*checkpointsREST)(nil)
	_ rest.GracefulDeleter      = (*checkpointsREST)(nil)
	_ rest.Scoper               = (*checkpointsREST)(nil)
	_ rest.SingularNameProvider = (*checkpointsREST)(nil)
)

func (r *checkpointsREST) New() runtime.Object     { return &v1alpha1.Checkpoint{} }
func (r *checkpointsREST) NewList() runtime.Object { return &v1alpha1.CheckpointList{} }
func (r *checkpointsREST) Destroy()                {}
func (r *checkpointsREST) NamespaceScoped() bool   { return false }
func (r *checkpointsREST) GetSingularName() string { return "checkpoint" }
func (r *checkpointsREST) object(i Info) *v1alpha1.Checkpoint {
	rv := strconv.FormatInt(i.Revision, 10)
	return &v1alpha1.Checkpoint{
		ObjectMeta: metav1.ObjectMeta{Name: i.Name, UID: i.UID, CreationTimestamp: metav1.NewTime(i.Created), ResourceVersion: rv,
			Labels: maps.Clone(i.Labels), Annotations: maps.Clone(i.Annotations)},
		Status: v1alpha1.CheckpointStatus{ResourceVersion: rv},
	}
}

func (r *checkpointsREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	c := obj.(*v1alpha1.Checkpoint)
	if c.Name == "" && c.GenerateName != "" {
		c.Name = names.SimpleNameGenerator.GenerateName(c.GenerateName)
	}
	if c.Name == "" {
		return nil, apierrors.NewBadRequest("a checkpoint needs metadata.name (or generateName)")
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if len(opts.DryRun) > 0 {
		return nil, apierrors.NewBadRequest("checkpoints take no dry run")
	}
	if _, err := r.cs.Take(ctx, c.Name); err != nil {
		return nil, err
	}
	i, err := r.cs.SetMeta(c.Name, c.Labels, c.Annotations)
	if err != nil {
		return nil, err
	}
	return r.object(i), nil
}

// Update keeps the new labels and annotations of a checkpoint; nothing
// else of it can change.
func (r *checkpointsREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc,
	_ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	old, err := r.Get(ctx, name, nil)
	if err != nil {
		return nil, false, err
	}
	obj, err := objInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, false, err
	}
	c := obj.(*v1alpha1.Checkpoint)
	if rv := c.ResourceVersion; rv != "" && rv != old.(*v1alpha1.Checkpoint).ResourceVersion {
		return nil, false, apierrors.NewConflict(Resource, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if updateValidation != nil {
		if err := updateValidation(ctx, obj, old); err != nil {
			return nil, false, err
		}
	}
	if len(opts.DryRun) > 0 {
		return nil, false, apierrors.NewBadRequest("checkpoints take no dry run")
	}
	i, err := r.cs.SetMeta(name, c.Labels, c.Annotations)
	if err != nil {
		return nil, false, err
	}
	return r.object(i), false, nil
}

func (r *checkpointsREST) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	i, err := r.cs.Get(name)
	if err != nil {
		return nil, err
	}
	return r.object(i), nil
}

func (r *checkpointsREST) List(_ context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	list := &v1alpha1.CheckpointList{Items: []v1alpha1.Checkpoint{}}
	for _, i := range r.cs.List() {
		if c := r.object(i); selected(opts, &c.ObjectMeta) {
			list.Items = append(list.Items, *c)
		}
	}
	return list, nil
}

func (r *checkpointsREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.Get(ctx, name, nil)
	if err != nil {
		return nil, false, err
	}
	return deleteAfter(ctx, obj, deleteValidation, opts, func() (runtime.Object, error) { return obj, r.cs.Delete(name) })
}

// selected says whether opts's field and label selectors select the
// object of meta.
func selected(opts *metainternalversion.ListOptions, meta *metav1.ObjectMeta) bool {
	if opts == nil {
		return true
	}
	return (opts.FieldSelector == nil || opts.FieldSelector.Matches(fields.Set{"metadata.name": meta.Name})) &&
		(opts.LabelSelector == nil || opts.LabelSelector.Matches(labels.Set(meta.Labels)))
}

// deleteAfter deletes obj by remove, once deleteValidation allows it,
// unless opts asks for a dry run.
func deleteAfter(ctx context.Context, obj runtime.Object, deleteValidation rest.ValidateObjectFunc, opts *metav1.DeleteOptions,
	remove func() (runtime.Object, error),
) (runtime.Object, bool, error) {
	if deleteValidation != nil {
		if err := deleteValidation(ctx, obj); err != nil {
			return nil, false, err
		}
	}
	if len(opts.DryRun) > 0 {
		return obj, true, nil
	}
	deleted, err := remove()
	if err != nil {
		return nil, false, err
	}
	return deleted, true, nil
}

// restoreREST is a checkpoint's restore subresource.
type restoreREST struct {
	cs *Checkpoints
}

var _ rest.NamedCreater = (*restoreREST)(nil)

func (r *restoreREST) New() runtime.Object { return &v1alpha1.Restore{} }
func (r *restoreREST) Destroy()            {}

func (r *restoreREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	restore := obj.(*v1alpha1.Restore)
	if restore.Name != "" && restore.Name != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the restore of checkpoint %q names %q", name, restore.Name))
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if len(opts.DryRun) > 0 {
		return nil, apierrors.NewBadRequest("restores take no dry run")
	}
	res, err := r.cs.Restore(ctx, name)
	if err != nil {
		return nil, err
	}
	return &v1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1alpha1.RestoreStatus{Deleted: int64(res.Deleted), Recreated: int64(res.Recreated), Reverted: int64(res.Reverted),
			ResourceVersion: strconv.FormatInt(res.Revision, 10)},
	}, nil
}
