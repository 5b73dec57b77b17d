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

package registrytest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// REST returns the store of resource that newStorage builds, completed on
// a decorator that builds no storage: enough to reach its strategy,
// predicate and table.
func REST(t testing.TB, newStorage func(generic.RESTOptionsGetter) (map[string]rest.Storage, error), resource string) *registry.REST {
	t.Helper()
	storages, err := newStorage(generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: resource,
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error),
			func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers,
		) (storage.Interface, factory.DestroyFunc, error) {
			return nil, func() {}, nil
		},
	})
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	r, ok := storages[resource].(*registry.REST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.REST", resource, storages[resource])
	}
	return r
}

// Storages returns the storages newStorage builds on a MemStorage, and
// fails t unless their keys are want (sorted): the resource and its
// subresources.
func Storages(t testing.TB, newStorage func(generic.RESTOptionsGetter) (map[string]rest.Storage, error), resource string, want ...string) map[string]rest.Storage {
	t.Helper()
	storages, err := newStorage(NewMemStorage().Options(resource))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(storages))); diff != "" {
		t.Fatalf("storage keys (-want +got):\n%s", diff)
	}
	return storages
}

// Messages returns each error as the API's Status shows it (field, type,
// value and detail), in order.
func Messages(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// InvalidCauses returns "field: type" for each cause of err, sorted, and
// fails t unless err is an Invalid (422) status.
func InvalidCauses(t testing.TB, err error) []string {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		t.Fatalf("got error %v, want Invalid", err)
	}
	out := []string{}
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+string(c.Type))
	}
	slices.Sort(out)
	return out
}

// Update updates name to obj as a client's PUT does: through the store of
// resource in storages or, with status, through its status subresource.
func Update(ctx context.Context, storages map[string]rest.Storage, resource string, status bool, name string, obj runtime.Object) (runtime.Object, error) {
	if status {
		resource += "/status"
	}
	out, _, err := storages[resource].(rest.Updater).Update(ctx, name, rest.DefaultUpdatedObjectInfo(obj),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return out, err
}

// Warnings records the warnings of the requests made with its context,
// as the API server's handler does for their Warning headers.
type Warnings struct{ Got []string }

// AddWarning implements k8s.io/apiserver's warning.Recorder.
func (w *Warnings) AddWarning(_, text string) { w.Got = append(w.Got, text) }

// Context returns a context of namespace that records warnings into w.
func (w *Warnings) Context(namespace string) context.Context {
	return warning.WithWarningRecorder(genericapirequest.WithNamespace(context.Background(), namespace), w)
}

// UpdateWarnings returns the warnings strategy gives an update of old to
// obj, after its PrepareForUpdate (which counts the generation), as the
// store runs them.
func UpdateWarnings(strategy rest.RESTUpdateStrategy, obj, old runtime.Object) []string {
	obj = obj.DeepCopyObject()
	strategy.PrepareForUpdate(context.Background(), obj, old)
	return strategy.WarningsOnUpdate(context.Background(), obj, old)
}

// CheckInvalid checks err, a write's: with want, err must be an Invalid
// (422) status whose causes (as InvalidCauses gives them) are want, and
// CheckInvalid returns true, the write having failed as wanted; without
// (nil), err must be nil.
func CheckInvalid(t testing.TB, err error, want []string) (failed bool) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("got error %v, want none", err)
		}
		return false
	}
	if diff := cmp.Diff(want, InvalidCauses(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	return true
}

// ValidateUpdate is what an update of old to obj is checked with, as the
// generic store checks it: the metadata's update rules, then strategy's.
func ValidateUpdate(strategy rest.RESTUpdateStrategy, obj, old runtime.Object) field.ErrorList {
	return rest.ValidateUpdate(context.Background(), obj, old, strategy)
}

// ErrorPaths returns "field: type" for each error, sorted.
func ErrorPaths(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: %s", e.Field, e.Type))
	}
	slices.Sort(out)
	return out
}

// ColumnNames returns the names of table's columns.
func ColumnNames(table *metav1.Table) []string {
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

// Shape is what a resource's store says of itself (Singular "": not checked).
type Shape struct {
	Resource   schema.GroupResource
	Singular   string
	Namespaced bool
	ShortNames []string
}

// CheckShape fails t where r does not have the shape want.
func CheckShape(t testing.TB, r *registry.REST, want Shape) {
	t.Helper()
	got := Shape{Resource: r.DefaultQualifiedResource, Namespaced: r.NamespaceScoped(), ShortNames: r.ShortNames()}
	if want.Singular != "" {
		got.Singular = r.SingularQualifiedResource.Resource
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("storage (-want +got):\n%s", diff)
	}
}

// CheckSpecAndStatus fails t unless store resets status and its status
// store spec, in groupVersion (as registry.SpecAndStatus makes them).
func CheckSpecAndStatus(t testing.TB, store *registry.REST, status *registry.StatusREST, groupVersion string, statusResets ...string) {
	t.Helper()
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if len(statusResets) == 0 {
		statusResets = []string{"spec"}
	}
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, statusResets...), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

// CheckPrepareKeeps fails t unless r's PrepareForCreate of obj, then
// PrepareForUpdate of it over old, leave obj as it was.
func CheckPrepareKeeps(t testing.TB, r *registry.REST, obj, old runtime.Object) {
	t.Helper()
	want := obj.DeepCopyObject()
	r.CreateStrategy.PrepareForCreate(context.Background(), obj)
	r.UpdateStrategy.PrepareForUpdate(context.Background(), obj, old)
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("after PrepareForCreate/PrepareForUpdate (-want +got):\n%s", diff)
	}
}

// CheckFields fails t unless r's field selectors see want in obj.
func CheckFields(t testing.TB, r *registry.REST, obj runtime.Object, want fields.Set) {
	t.Helper()
	_, got, err := r.PredicateFunc(labels.Everything(), fields.Everything()).GetAttrs(obj)
	if err != nil {
		t.Fatalf("GetAttrs: got error %v, want none", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}
