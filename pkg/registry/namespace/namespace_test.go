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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// namespaces are the stores of namespaces and their subresources on one registrytest.MemStorage.
type namespaces struct {
	mem      *registrytest.MemStorage
	store    *REST
	status   *registry.StatusREST
	finalize *FinalizeREST
}

func newNamespaces(t *testing.T) namespaces {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("namespaces"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	n := namespaces{mem: mem}
	var ok1, ok2, ok3 bool
	n.store, ok1 = storages["namespaces"].(*REST)
	n.status, ok2 = storages["namespaces/status"].(*registry.StatusREST)
	n.finalize, ok3 = storages["namespaces/finalize"].(*FinalizeREST)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("storages: got %v, want namespaces, namespaces/status and namespaces/finalize", storages)
	}
	return n
}

// ctx is a request context for the cluster-scoped namespaces.
func ctx() context.Context { return genericapirequest.WithNamespace(context.Background(), "") }

const key = "/namespaces/prod"

// seed stores ns (named prod) as it is and returns the stored copy.
func (n namespaces) seed(t *testing.T, ns *corev1.Namespace) *corev1.Namespace {
	t.Helper()
	if got, err := n.store.KeyFunc(ctx(), ns.Name); err != nil || got != key {
		t.Fatalf("KeyFunc(%q): got (%q, %v), want (%q, nil)", ns.Name, got, err, key)
	}
	return n.mem.Seed(t, key, ns).(*corev1.Namespace)
}

func (n namespaces) stored(t *testing.T) (*corev1.Namespace, bool) {
	t.Helper()
	obj, ok := n.mem.Stored(key)
	if !ok {
		return nil, false
	}
	return obj.(*corev1.Namespace), true
}

// activeNamespace returns a defaulted namespace prod as the create strategy leaves it.
func activeNamespace() *corev1.Namespace {
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", UID: "uid-1"},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	api.Scheme.Default(ns)
	return ns
}

func TestStorage(t *testing.T) {
	n := newNamespaces(t)
	if n.store.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got true, want false")
	}
	if diff := cmp.Diff([]string{"ns"}, n.store.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	for name, tt := range map[string]struct {
		got  map[fieldpath.APIVersion]*fieldpath.Set
		want string
	}{
		"namespaces":          {got: n.store.GetResetFields(), want: "status"},
		"namespaces/status":   {got: n.status.GetResetFields(), want: "spec"},
		"namespaces/finalize": {got: n.finalize.GetResetFields(), want: "status"},
	} {
		if diff := cmp.Diff(registry.Fieldpaths("v1", tt.want), tt.got, equal); diff != "" {
			t.Errorf("%s reset fields (-want +got):\n%s", name, diff)
		}
	}
}

func TestPrepareForCreate(t *testing.T) {
	tests := []struct {
		name           string
		finalizers     []corev1.FinalizerName
		status         corev1.NamespaceStatus
		wantFinalizers []corev1.FinalizerName
	}{
		{name: "no finalizers", finalizers: nil, wantFinalizers: []corev1.FinalizerName{"kubernetes"}},
		{name: "kubernetes already there", finalizers: []corev1.FinalizerName{"kubernetes"}, wantFinalizers: []corev1.FinalizerName{"kubernetes"}},
		{
			name:           "other finalizers kept, kubernetes added last",
			finalizers:     []corev1.FinalizerName{"example.com/a", "example.com/b"},
			wantFinalizers: []corev1.FinalizerName{"example.com/a", "example.com/b", "kubernetes"},
		},
		{
			name:           "client-written status dropped",
			status:         corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{{Type: "X"}}},
			wantFinalizers: []corev1.FinalizerName{"kubernetes"},
		},
	}
	strategy := newNamespaces(t).store.CreateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: corev1.NamespaceSpec{Finalizers: tt.finalizers}, Status: tt.status}
			strategy.PrepareForCreate(context.Background(), ns)
			if diff := cmp.Diff(tt.wantFinalizers, ns.Spec.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(corev1.NamespaceStatus{Phase: corev1.NamespaceActive}, ns.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.Namespace]{
		{Name: "valid", Obj: activeNamespace(), Want: []string{}},
		{
			Name: "name with a dot (no DNS label)",
			Obj:  registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) { ns.Name = "prod.eu" }),
			Want: []string{"metadata.name: Invalid value"},
		},
		{
			Name: "upper-case name",
			Obj:  registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) { ns.Name = "Prod" }),
			Want: []string{"metadata.name: Invalid value"},
		},
		{
			Name: "namespace set on a namespace",
			Obj:  registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) { ns.Namespace = "default" }),
			Want: []string{"metadata.namespace: Forbidden"},
		},
		{
			Name: "qualified finalizer",
			Obj: registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) {
				ns.Spec.Finalizers = append(ns.Spec.Finalizers, "example.com/cleanup")
			}),
			Want: []string{},
		},
		{
			Name: "finalizer that is no qualified name",
			Obj: registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) {
				ns.Spec.Finalizers = append(ns.Spec.Finalizers, "bad finalizer!")
			}),
			Want: []string{"spec.finalizers: Invalid value", "spec.finalizers: Invalid value"},
		},
	}
	strategy := newNamespaces(t).store.CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

// TestUpdateThroughStores sends the same change of labels, finalizers and
// status to each endpoint: each keeps what it may not change.
func TestUpdateThroughStores(t *testing.T) {
	tests := []struct {
		name           string
		updater        func(namespaces) rest.Updater
		wantFinalizers []corev1.FinalizerName
		wantCondition  bool
	}{
		{
			name:           "namespaces: finalizers and status kept",
			updater:        func(n namespaces) rest.Updater { return n.store },
			wantFinalizers: []corev1.FinalizerName{"kubernetes"},
		},
		{
			name:           "namespaces/status: spec kept",
			updater:        func(n namespaces) rest.Updater { return n.status },
			wantFinalizers: []corev1.FinalizerName{"kubernetes"},
			wantCondition:  true,
		},
		{
			name:           "namespaces/finalize: status kept",
			updater:        func(n namespaces) rest.Updater { return n.finalize },
			wantFinalizers: []corev1.FinalizerName{"example.com/other"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNamespaces(t)
			current := n.seed(t, activeNamespace())
			update := registrytest.Modified(current, func(ns *corev1.Namespace) {
				ns.Labels["team"] = "a"
				ns.Spec.Finalizers = []corev1.FinalizerName{"example.com/other"}
				ns.Status.Conditions = []corev1.NamespaceCondition{{Type: corev1.NamespaceDeletionDiscoveryFailure, Status: corev1.ConditionTrue}}
			})
			out, _, err := tt.updater(n).Update(ctx(), "prod", rest.DefaultUpdatedObjectInfo(update), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: got error %v, want none", err)
			}
			got := out.(*corev1.Namespace)
			if got.Labels["team"] != "a" {
				t.Errorf("labels: got %v, want team=a added", got.Labels)
			}
			if diff := cmp.Diff(tt.wantFinalizers, got.Spec.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if got := len(got.Status.Conditions) == 1; got != tt.wantCondition {
				t.Errorf("condition set: got %t, want %t", got, tt.wantCondition)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	n := newNamespaces(t)
	ns := activeNamespace()
	registrytest.CheckFields(t, n.store.REST, ns, fields.Set{"metadata.name": "prod", "status.phase": "Active"})
}

func TestTable(t *testing.T) {
	n := newNamespaces(t)
	table, err := n.store.ConvertToTable(context.Background(), &corev1.NamespaceList{Items: []corev1.Namespace{
		*activeNamespace(),
		*registrytest.Modified(activeNamespace(), func(ns *corev1.Namespace) { ns.Name, ns.Status.Phase = "old", corev1.NamespaceTerminating }),
	}}, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Status", "Age"}, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	var cells [][]any
	for _, r := range table.Rows {
		cells = append(cells, r.Cells)
	}
	want := [][]any{{"prod", "Active", "<unknown>"}, {"old", "Terminating", "<unknown>"}}
	if diff := cmp.Diff(want, cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

// TestHiddenStoreMethods: as upstream's namespaces REST, ours deletes no
// collection and does not say its DELETE returns the object (the OpenAPI
// says a Status).
func TestHiddenStoreMethods(t *testing.T) {
	var s rest.Storage = &REST{}
	if _, ok := s.(rest.CollectionDeleter); ok {
		t.Error("REST is a rest.CollectionDeleter")
	}
	if _, ok := s.(rest.MayReturnFullObjectDeleter); ok {
		t.Error("REST is a rest.MayReturnFullObjectDeleter")
	}
}
