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

package controllerrevision

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func revision(data string, rev int64) *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-6c8b5", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Revision:   rev,
	}
	if data != "" {
		cr.Data = runtime.RawExtension{Raw: []byte(data)}
	}
	return cr
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: appsv1.Resource("controllerrevisions"), Singular: "controllerrevision", Namespaced: true})
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cr   *appsv1.ControllerRevision
		want []string
	}{
		{name: "valid", cr: revision(`{"spec":{"template":{}}}`, 1), want: []string{}},
		{name: "revision 0", cr: revision(`{}`, 0), want: []string{}},
		{name: "negative revision", cr: revision(`{}`, -1), want: []string{"revision: Invalid value"}},
		{name: "no data", cr: revision("", 1), want: []string{"data: Required value"}},
		{name: "null data", cr: revision("null", 1), want: []string{"data: Required value"}},
		{name: "not JSON", cr: revision("{", 1), want: []string{"data: Invalid value"}},
		{name: "not an object", cr: revision(`[1,2]`, 1), want: []string{"data: Required value"}},
	}
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), tt.cr))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	old := revision(`{"spec":{"replicas":1,"image":"a"}}`, 1)
	tests := []struct {
		name string
		cr   *appsv1.ControllerRevision
		want []string
	}{
		{name: "unchanged", cr: revision(`{"spec":{"replicas":1,"image":"a"}}`, 1), want: []string{}},
		{name: "re-encoded", cr: revision(`{ "spec": { "image": "a", "replicas": 1 } }`, 1), want: []string{}},
		{name: "revision may change (as upstream)", cr: revision(`{"spec":{"replicas":1,"image":"a"}}`, 2), want: []string{}},
		{name: "negative revision", cr: revision(`{"spec":{"replicas":1,"image":"a"}}`, -2), want: []string{"revision: Invalid value"}},
		{name: "data changed", cr: revision(`{"spec":{"replicas":2,"image":"a"}}`, 1), want: []string{"data: Invalid value"}},
	}
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), tt.cr, old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareKeepsEverything(t *testing.T) {
	registrytest.CheckPrepareKeeps(t, registrytest.REST(t, NewStorage, "controllerrevisions"), revision(`{"a":1}`, 3), revision(`{"a":1}`, 2))
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	registrytest.CheckFields(t, store, revision(`{}`, 1), fields.Set{"metadata.name": "agent-6c8b5", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	owned := revision(`{}`, 2)
	owned.OwnerReferences = []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "not-the-controller"},
		{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", Controller: ptr.To(true)},
	}
	core := revision(`{}`, 1)
	core.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ReplicationController", Name: "web", Controller: ptr.To(true)}}
	tests := []struct {
		name string
		cr   *appsv1.ControllerRevision
		want []any
	}{
		{name: "no controller", cr: revision(`{}`, 1), want: []any{"agent-6c8b5", "<none>", int64(1), "<unknown>"}},
		{name: "daemon set", cr: owned, want: []any{"agent-6c8b5", "daemonset.apps/agent", int64(2), "<unknown>"}},
		{name: "core kind", cr: core, want: []any{"agent-6c8b5", "replicationcontroller/web", int64(1), "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.cr, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Controller", "Revision", "Age"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
