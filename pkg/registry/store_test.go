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
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// decorated records what the generic store hands its storage decorator.
type decorated struct {
	prefix   string
	getAttrs storage.AttrFunc
	triggers storage.IndexerFuncs
}

// recordingOptions returns REST options whose decorator records its
// arguments into d and builds no storage, so stores complete without etcd.
func recordingOptions(d *decorated, decorateErr error) generic.RESTOptions {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: "widgets",
		Decorator: func(_ *storagebackend.ConfigForResource, prefix string, _ func(runtime.Object) (string, error),
			_, _ func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs, _ *cache.Indexers,
		) (storage.Interface, factory.DestroyFunc, error) {
			*d = decorated{prefix: prefix, getAttrs: getAttrs, triggers: triggers}
			return nil, func() {}, decorateErr
		},
	}
}

func testResource(namespaced bool) Resource {
	return Resource{
		Resource:   corev1.Resource("configmaps"),
		Singular:   "configmap",
		ShortNames: []string{"cm"},
		Categories: []string{"all"},
		New:        func() runtime.Object { return &corev1.ConfigMap{} },
		NewList:    func() runtime.Object { return &corev1.ConfigMapList{} },
		Strategy:   NewStrategy(namespaced),
		Table:      testTable,
	}
}

func newTestREST(t *testing.T, r Resource) (*REST, *decorated) {
	t.Helper()
	d := &decorated{}
	rest, err := NewREST(recordingOptions(d, nil), r)
	if err != nil {
		t.Fatalf("NewREST: got error %v, want none", err)
	}
	return rest, d
}

func TestNewREST(t *testing.T) {
	rest, d := newTestREST(t, testResource(true))
	if diff := cmp.Diff([]string{"cm"}, rest.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"all"}, rest.Categories()); diff != "" {
		t.Errorf("Categories (-want +got):\n%s", diff)
	}
	if got, want := rest.GetSingularName(), "configmap"; got != want {
		t.Errorf("GetSingularName: got %q, want %q", got, want)
	}
	if got, want := rest.DefaultQualifiedResource, corev1.Resource("configmaps"); got != want {
		t.Errorf("DefaultQualifiedResource: got %v, want %v", got, want)
	}
	if !rest.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if got, want := d.prefix, "/widgets"; got != want {
		t.Errorf("storage prefix: got %q, want %q", got, want)
	}
	if d.triggers != nil {
		t.Errorf("triggers without IndexFields: got %v, want none", d.triggers)
	}
	if _, ok := rest.New().(*corev1.ConfigMap); !ok {
		t.Errorf("New: got %T, want *v1.ConfigMap", rest.New())
	}
	if _, ok := rest.NewList().(*corev1.ConfigMapList); !ok {
		t.Errorf("NewList: got %T, want *v1.ConfigMapList", rest.NewList())
	}
	table, err := rest.ConvertToTable(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if diff := cmp.Diff(testTable.Columns, table.ColumnDefinitions); diff != "" {
		t.Errorf("table columns (-want +got):\n%s", diff)
	}
}

func TestNewRESTErrors(t *testing.T) {
	decorateErr := errors.New("no etcd")
	tests := []struct {
		name    string
		options generic.RESTOptionsGetter
		want    string
	}{
		{name: "no options", options: nil, want: "configmaps storage: "},
		{name: "decorator error", options: recordingOptions(&decorated{}, decorateErr), want: "configmaps storage: no etcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewREST(tt.options, testResource(true))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("NewREST: got error %v, want one starting %q", err, tt.want)
			}
		})
	}
	t.Run("decorator error is wrapped", func(t *testing.T) {
		_, err := NewREST(recordingOptions(&decorated{}, decorateErr), testResource(true))
		if !errors.Is(err, decorateErr) {
			t.Errorf("errors.Is(err, decorator's error): got false for %v, want true", err)
		}
	})
}

func TestResourceAttrs(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "prod", Labels: map[string]string{"tier": "web"}}}
	custom := func(obj runtime.Object) fields.Set {
		return fields.Set{"metadata.name": obj.(*corev1.ConfigMap).Name, "custom": "yes"}
	}
	tests := []struct {
		name       string
		namespaced bool
		fields     func(runtime.Object) fields.Set
		want       fields.Set
	}{
		{name: "namespaced without Fields", namespaced: true, want: fields.Set{"metadata.name": "app", "metadata.namespace": "prod"}},
		{name: "cluster-scoped without Fields", namespaced: false, want: fields.Set{"metadata.name": "app"}},
		{name: "Fields replaces the default set", namespaced: true, fields: custom, want: fields.Set{"metadata.name": "app", "custom": "yes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testResource(tt.namespaced)
			r.Fields = tt.fields
			rest, d := newTestREST(t, r)
			// The decorator (the watch cache) and selectors on etcd reads use the same attributes.
			for name, getAttrs := range map[string]storage.AttrFunc{
				"decorator": d.getAttrs,
				"predicate": rest.PredicateFunc(labels.Everything(), fields.Everything()).GetAttrs,
			} {
				l, f, err := getAttrs(cm)
				if err != nil {
					t.Fatalf("%s GetAttrs: got error %v, want none", name, err)
				}
				if diff := cmp.Diff(labels.Set{"tier": "web"}, l); diff != "" {
					t.Errorf("%s labels (-want +got):\n%s", name, diff)
				}
				if diff := cmp.Diff(tt.want, f); diff != "" {
					t.Errorf("%s fields (-want +got):\n%s", name, diff)
				}
			}
		})
	}
	t.Run("object without metadata", func(t *testing.T) {
		if _, _, err := testResource(true).attrs(&metav1.Status{}); err == nil {
			t.Errorf("attrs(Status): got no error, want one")
		}
	})
}

func TestPredicateMatches(t *testing.T) {
	rest, _ := newTestREST(t, testResource(true))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "prod", Labels: map[string]string{"tier": "web"}}}
	tests := []struct {
		name  string
		label string
		field string
		want  bool
	}{
		{name: "everything", want: true},
		{name: "matching label", label: "tier=web", want: true},
		{name: "other label", label: "tier=db", want: false},
		{name: "matching name", field: "metadata.name=app", want: true},
		{name: "matching namespace", field: "metadata.namespace=prod", want: true},
		{name: "other namespace", field: "metadata.namespace=dev", want: false},
		{name: "both match", label: "tier", field: "metadata.name=app", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls, err := labels.Parse(tt.label)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := fields.ParseSelector(tt.field)
			if err != nil {
				t.Fatal(err)
			}
			pred := rest.PredicateFunc(ls, fs)
			got, err := pred.Matches(cm)
			if err != nil {
				t.Fatalf("Matches: got error %v, want none", err)
			}
			if got != tt.want {
				t.Errorf("Matches(%q, %q): got %v, want %v", tt.label, tt.field, got, tt.want)
			}
		})
	}
}

func TestNewRESTIndexFields(t *testing.T) {
	r := testResource(true)
	r.Fields = func(obj runtime.Object) fields.Set {
		cm := obj.(*corev1.ConfigMap)
		return fields.Set{"metadata.name": cm.Name, "data.node": cm.Data["node"], "data.zone": cm.Data["zone"]}
	}
	r.IndexFields = []string{"data.node", "data.zone"}
	_, d := newTestREST(t, r)
	if len(d.triggers) != 2 {
		t.Fatalf("triggers: got %d (%v), want 2", len(d.triggers), d.triggers)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"node": "n1", "zone": "z1"}}
	// Each trigger reads its own field (a loop variable captured once would
	// make both read the last field).
	for field, want := range map[string]string{"data.node": "n1", "data.zone": "z1"} {
		trigger, ok := d.triggers[field]
		if !ok {
			t.Errorf("trigger for %q: got none, want one", field)
			continue
		}
		if got := trigger(cm); got != want {
			t.Errorf("trigger %q: got %q, want %q", field, got, want)
		}
	}
}

func TestNewStatusREST(t *testing.T) {
	parentStrategy := NewStrategy(true)
	parentStrategy.ResetFields = Fieldpaths("v1", "status")
	r := testResource(true)
	r.Strategy = parentStrategy
	parent, _ := newTestREST(t, r)

	statusStrategy := NewStrategy(true)
	statusStrategy.ResetFields = Fieldpaths("v1", "spec")
	status := NewStatusREST(parent, statusStrategy)

	if diff := cmp.Diff(Fieldpaths("v1", "spec"), status.GetResetFields(), cmp.Comparer(equalSets)); diff != "" {
		t.Errorf("status GetResetFields (-want +got):\n%s", diff)
	}
	if status.store.CreateStrategy != nil || status.store.DeleteStrategy != nil {
		t.Errorf("status create/delete strategies: got (%v, %v), want none", status.store.CreateStrategy, status.store.DeleteStrategy)
	}
	if _, ok := status.New().(*corev1.ConfigMap); !ok {
		t.Errorf("status New: got %T, want *v1.ConfigMap", status.New())
	}
	// The parent keeps its own strategies: the status store is a copy.
	if parent.CreateStrategy == nil || parent.DeleteStrategy == nil {
		t.Errorf("parent create/delete strategies after NewStatusREST: got (%v, %v), want set", parent.CreateStrategy, parent.DeleteStrategy)
	}
	for name, tt := range map[string]struct {
		strategy any
		want     string
	}{
		"parent reset fields":    {strategy: parent.ResetFieldsStrategy, want: "status"},
		"parent update strategy": {strategy: parent.UpdateStrategy, want: "status"},
		"status update strategy": {strategy: status.store.UpdateStrategy, want: "spec"},
		"status reset fields":    {strategy: status.store.ResetFieldsStrategy, want: "spec"},
	} {
		s, ok := tt.strategy.(Strategy)
		if !ok {
			t.Errorf("%s: got %T, want a Strategy", name, tt.strategy)
			continue
		}
		if diff := cmp.Diff(Fieldpaths("v1", tt.want), s.GetResetFields(), cmp.Comparer(equalSets)); diff != "" {
			t.Errorf("%s: strategy's reset fields (-want +got):\n%s", name, diff)
		}
	}
	table, err := status.ConvertToTable(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, nil)
	if err != nil || len(table.Rows) != 1 {
		t.Errorf("status ConvertToTable: got (%v, %v), want one row", table, err)
	}
}

func equalSets(a, b *fieldpath.Set) bool { return a.Equals(b) }
