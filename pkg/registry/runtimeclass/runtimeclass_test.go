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

package runtimeclass

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validClass() *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gvisor", UID: "uid-1", ResourceVersion: "1"},
		Handler:    "runsc",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{"cpu": resource.MustParse("250m"), "memory": resource.MustParse("120Mi")}},
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{"runtime": "gvisor"}},
	}
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "runtimeclasses")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: nodev1.Resource("runtimeclasses"), Singular: "runtimeclass"})
	if !store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got false, want true (as upstream)")
	}
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Mutation[*nodev1.RuntimeClass]{
		{Name: "valid", Mutate: func(*nodev1.RuntimeClass) {}, Want: []string{}},
		{Name: "handler only", Mutate: func(rc *nodev1.RuntimeClass) { rc.Overhead, rc.Scheduling = nil, nil }, Want: []string{}},
		{Name: "no handler", Mutate: func(rc *nodev1.RuntimeClass) { rc.Handler = "" }, Want: []string{"handler: Required value"}},
		{Name: "handler not a DNS label", Mutate: func(rc *nodev1.RuntimeClass) { rc.Handler = "run.sc" }, Want: []string{"handler: Invalid value"}},
		{
			Name: "overhead: negative, not a container resource",
			Mutate: func(rc *nodev1.RuntimeClass) {
				rc.Overhead.PodFixed = corev1.ResourceList{"cpu": resource.MustParse("-1"), "pods": resource.MustParse("1")}
			},
			Want: []string{"overhead.limits[cpu]: Invalid value", "overhead.limits[pods]: Invalid value"},
		},
		{
			Name:   "bad node selector",
			Mutate: func(rc *nodev1.RuntimeClass) { rc.Scheduling.NodeSelector = map[string]string{"bad key!": "x"} },
			Want:   []string{"scheduling.nodeSelector: Invalid value"},
		},
		{Name: "name not a DNS subdomain", Mutate: func(rc *nodev1.RuntimeClass) { rc.Name = "G_Visor" }, Want: []string{"metadata.name: Invalid value"}},
	}
	store := registrytest.REST(t, NewStorage, "runtimeclasses")
	registrytest.ValidateMutations(t, store.CreateStrategy, registrytest.ErrorPaths, validClass, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Mutation[*nodev1.RuntimeClass]{
		{Name: "scheduling may change", Mutate: func(rc *nodev1.RuntimeClass) { rc.Scheduling = nil }, Want: []string{}},
		{Name: "handler is immutable", Mutate: func(rc *nodev1.RuntimeClass) { rc.Handler = "runc" }, Want: []string{"handler: Invalid value"}},
		{Name: "update also validates", Mutate: func(rc *nodev1.RuntimeClass) { rc.Scheduling.NodeSelector = map[string]string{"a": "bad value!"} }, Want: []string{
			"scheduling.nodeSelector: Invalid value"}},
	}
	store := registrytest.REST(t, NewStorage, "runtimeclasses")
	registrytest.ValidateUpdateMutations(t, store.UpdateStrategy, registrytest.ErrorPaths, validClass, tests)
}

func TestPrepareKeepsEverything(t *testing.T) {
	registrytest.CheckPrepareKeeps(t, registrytest.REST(t, NewStorage, "runtimeclasses"), validClass(), validClass())
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "runtimeclasses"), validClass(), fields.Set{"metadata.name": "gvisor"})
}

func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "runtimeclasses")
	table, err := store.ConvertToTable(context.Background(), validClass(), nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if diff := cmp.Diff([]string{"Name", "Handler", "Age"}, registrytest.ColumnNames(table)); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"gvisor", "runsc", "<unknown>"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
