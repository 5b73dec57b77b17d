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
	tests := []registrytest.Change[*appsv1.ControllerRevision]{
		{Name: "valid", Obj: revision(`{"spec":{"template":{}}}`, 1), Want: []string{}},
		{Name: "revision 0", Obj: revision(`{}`, 0), Want: []string{}},
		{Name: "negative revision", Obj: revision(`{}`, -1), Want: []string{"revision: Invalid value"}},
		{Name: "no data", Obj: revision("", 1), Want: []string{"data: Required value"}},
		{Name: "null data", Obj: revision("null", 1), Want: []string{"data: Required value"}},
		{Name: "not JSON", Obj: revision("{", 1), Want: []string{"data: Invalid value"}},
		{Name: "not an object", Obj: revision(`[1,2]`, 1), Want: []string{"data: Required value"}},
	}
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	registrytest.ValidateChanges(t, store.CreateStrategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	old := revision(`{"spec":{"replicas":1,"image":"a"}}`, 1)
	tests := []registrytest.Change[*appsv1.ControllerRevision]{
		{Name: "unchanged", Obj: revision(`{"spec":{"replicas":1,"image":"a"}}`, 1), Want: []string{}},
		{Name: "re-encoded", Obj: revision(`{ "spec": { "image": "a", "replicas": 1 } }`, 1), Want: []string{}},
		{Name: "revision may change (as upstream)", Obj: revision(`{"spec":{"replicas":1,"image":"a"}}`, 2), Want: []string{}},
		{Name: "negative revision", Obj: revision(`{"spec":{"replicas":1,"image":"a"}}`, -2), Want: []string{"revision: Invalid value"}},
		{Name: "data changed", Obj: revision(`{"spec":{"replicas":2,"image":"a"}}`, 1), Want: []string{"data: Invalid value"}},
	}
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	registrytest.RunChanges(t, "ValidateUpdate errors", tests, func(obj, _ *appsv1.ControllerRevision) []string {
		return registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), obj, old))
	})
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
	tests := []registrytest.Row{
		{Name: "no controller", Obj: revision(`{}`, 1), Want: []any{"agent-6c8b5", "<none>", int64(1), "<unknown>"}},
		{Name: "daemon set", Obj: owned, Want: []any{"agent-6c8b5", "daemonset.apps/agent", int64(2), "<unknown>"}},
		{Name: "core kind", Obj: core, Want: []any{"agent-6c8b5", "replicationcontroller/web", int64(1), "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "controllerrevisions")
	registrytest.CheckTable(t, store, []string{"Name", "Controller", "Revision", "Age"}, tests...)
}
