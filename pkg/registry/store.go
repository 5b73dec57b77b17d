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
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Resource describes one served resource.
type Resource struct {
	Resource   schema.GroupResource
	Singular   string
	ShortNames []string
	Categories []string
	New        func() runtime.Object
	NewList    func() runtime.Object
	Strategy   Strategy
	Table      Table
	// Fields returns the field set a selector matches, including metadata.name
	// and (for namespaced types) metadata.namespace. Nil: only those two.
	Fields func(obj runtime.Object) fields.Set
	// IndexFields are Fields the watch cache indexes, for selectors that pin
	// one value (pods: spec.nodeName, as kube-apiserver).
	IndexFields []string
}

// REST is the storage of one resource: the generic etcd-backed store plus what
// discovery shows about it.
type REST struct {
	*genericregistry.Store
	shortNames []string
	categories []string
	// deleteWarning, if set, warns a deletion that names no propagation
	// policy (its dependents are orphaned).
	deleteWarning string
}

var (
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.CategoriesProvider   = &REST{}
	_ rest.StandardStorage      = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

func (r *REST) ShortNames() []string { return r.shortNames }
func (r *REST) Categories() []string { return r.categories }

// Delete is the store's, with its deleteWarning.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	r.warnOfOrphans(ctx, options)
	return r.Store.Delete(ctx, name, deleteValidation, options)
}

// DeleteCollection is the store's, with its deleteWarning.
func (r *REST) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions, listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	r.warnOfOrphans(ctx, options)
	return r.Store.DeleteCollection(ctx, deleteValidation, options, listOptions)
}

//nolint:staticcheck // OrphanDependents: a policy still asked for
func (r *REST) warnOfOrphans(ctx context.Context, options *metav1.DeleteOptions) {
	if r.deleteWarning != "" && options != nil && options.PropagationPolicy == nil && options.OrphanDependents == nil {
		warning.AddWarning(ctx, "", r.deleteWarning)
	}
}

// Mapper is a resource package's typed storage (what its New returns):
// Map is each of its resources by the path it is installed at.
type Mapper interface {
	Map() map[string]rest.Storage
}

// StorageMap returns s.Map(), or err if not nil: a resource package's
// NewStorage over its typed New.
func StorageMap[S Mapper](s S, err error) (map[string]rest.Storage, error) {
	if err != nil {
		return nil, err
	}
	return s.Map(), nil
}

// NewREST builds the store of r on the storage optsGetter gives for it.
func NewREST(optsGetter generic.RESTOptionsGetter, r Resource) (*REST, error) {
	s := r.Strategy
	store := &genericregistry.Store{
		NewFunc:                   r.New,
		NewListFunc:               r.NewList,
		DefaultQualifiedResource:  r.Resource,
		SingularQualifiedResource: schema.GroupResource{Group: r.Resource.Group, Resource: r.Singular},
		PredicateFunc: func(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
			return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: r.attrs}
		},
		CreateStrategy:      s,
		UpdateStrategy:      s,
		DeleteStrategy:      s,
		ResetFieldsStrategy: s,
		TableConvertor:      r.Table,
	}
	options := &generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: r.attrs}
	if len(r.IndexFields) > 0 {
		options.TriggerFunc = storage.IndexerFuncs{}
		for _, field := range r.IndexFields {
			options.TriggerFunc[field] = func(obj runtime.Object) string { return r.Fields(obj)[field] }
		}
	}
	store.ReturnDeletedObject = returnsDeletedObject[r.Resource]
	deleteWarning, orphans := orphansByDefault[r.Resource]
	if orphans {
		store.DeleteStrategy = orphanDependents{s}
	}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, fmt.Errorf("%s storage: %w", r.Resource, err)
	}
	return &REST{Store: store, shortNames: r.ShortNames, categories: r.Categories, deleteWarning: deleteWarning}, nil
}

// orphansByDefault are the resources whose deletion without a propagation
// policy orphans their dependents, as upstream's strategies have it for
// the versions served (DefaultGarbageCollectionPolicy), with the warning
// upstream's store gives such a deletion, if any.
var orphansByDefault = map[schema.GroupResource]string{
	{Resource: "replicationcontrollers"}: "",
	{Group: "batch", Resource: "jobs"}: "child pods are preserved by default when jobs are deleted; " +
		"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning",
}

// orphanDependents is the delete strategy of a resource orphansByDefault.
type orphanDependents struct{ Strategy }

var _ rest.GarbageCollectionDeleteStrategy = orphanDependents{}

func (orphanDependents) DefaultGarbageCollectionPolicy(context.Context) rest.GarbageCollectionPolicy {
	return rest.OrphanDependents
}

// returnsDeletedObject are the resources whose DELETE answers with the
// deleted object, not a Status, as upstream's stores of them set
// ReturnDeletedObject (k8s.io/kubernetes pkg/registry, 1.37).
var returnsDeletedObject = map[schema.GroupResource]bool{
	{Resource: "namespaces"}: true, {Resource: "persistentvolumes"}: true, {Resource: "persistentvolumeclaims"}: true,
	{Resource: "pods"}: true, {Resource: "podtemplates"}: true, {Resource: "resourcequotas"}: true,
	{Resource: "services"}: true, {Resource: "serviceaccounts"}: true,
	{Group: "resource.k8s.io", Resource: "deviceclasses"}: true, {Group: "resource.k8s.io", Resource: "resourceclaims"}: true,
	{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}: true, {Group: "resource.k8s.io", Resource: "resourceslices"}: true,
	{Group: "storage.k8s.io", Resource: "csidrivers"}: true, {Group: "storage.k8s.io", Resource: "csinodes"}: true,
	{Group: "storage.k8s.io", Resource: "storageclasses"}: true, {Group: "storage.k8s.io", Resource: "volumeattachments"}: true,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: true,
}

func (r Resource) attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	var f fields.Set
	if r.Fields != nil {
		f = r.Fields(obj)
	} else {
		f = fields.Set{"metadata.name": m.GetName()}
		if r.Strategy.Namespaced {
			f["metadata.namespace"] = m.GetNamespace()
		}
	}
	return labels.Set(m.GetLabels()), f, nil
}

// StatusREST serves the status subresource of a resource: updates there
// change only status (the strategy's OnUpdate carries over the rest).
type StatusREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher             = &StatusREST{}
	_ rest.ResetFieldsStrategy = &StatusREST{}
)

// NewStatusREST returns the status subresource of parent, updated with strategy.
func NewStatusREST(parent *REST, strategy Strategy) *StatusREST {
	statusStore := *parent.Store
	statusStore.CreateStrategy = nil
	statusStore.DeleteStrategy = nil
	statusStore.UpdateStrategy = strategy
	statusStore.ResetFieldsStrategy = strategy
	return &StatusREST{store: &statusStore}
}

func (r *StatusREST) New() runtime.Object { return r.store.New() }

// Destroy is a no-op: the parent's store owns the storage.
func (r *StatusREST) Destroy() {}

func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Subresources never create.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}

// Fieldpaths builds a ResetFields map for the v1 of group from dotted paths.
func Fieldpaths(groupVersion string, paths ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	set := fieldpath.NewSet()
	for _, p := range paths {
		var path fieldpath.Path
		for _, name := range strings.Split(p, ".") {
			path = append(path, fieldpath.PathElement{FieldName: &name})
		}
		set.Insert(path)
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{fieldpath.APIVersion(groupVersion): set}
}
