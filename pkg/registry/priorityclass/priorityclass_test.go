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

package priorityclass

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// newREST returns the priority classes storage on a MemStorage and the
// registry.REST inside it.
func newREST(t *testing.T) (*registrytest.MemStorage, *REST) {
	t.Helper()
	mem := registrytest.NewMemStorage()
	storages, err := NewStorage(mem.Options("priorityclasses"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	r, ok := storages["priorityclasses"].(*REST)
	if !ok {
		t.Fatalf("storage: got %T, want *REST", storages["priorityclasses"])
	}
	return mem, r
}

func store(t *testing.T) *registry.REST {
	t.Helper()
	_, r := newREST(t)
	return r.REST
}

func class(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{
		ObjectMeta:       metav1.ObjectMeta{Name: name, UID: "uid-1", ResourceVersion: "1"},
		Value:            value,
		PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
	}
}

func TestStorage(t *testing.T) {
	s := store(t)
	registrytest.CheckShape(t, s, registrytest.Shape{Resource: schedulingv1.Resource("priorityclasses"), Singular: "priorityclass", ShortNames: []string{"pc"}})
	var _ rest.StandardStorage = &REST{}
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*schedulingv1.PriorityClass]{
		{Name: "valid", Obj: class("high", 1000), Want: []string{}},
		{Name: "highest user value", Obj: class("highest", HighestUserDefinablePriority), Want: []string{}},
		{Name: "negative value", Obj: class("low", -5), Want: []string{}},
		{Name: "above the user range", Obj: class("too-high", HighestUserDefinablePriority+1), Want: []string{"value: Forbidden"}},
		{Name: "system class with its value", Obj: class("system-cluster-critical", 2000000000), Want: []string{}},
		{Name: "system class with another value", Obj: class("system-node-critical", 1000), Want: []string{"metadata.name: Forbidden"}},
		{Name: "unknown system- name", Obj: class("system-mine", 10), Want: []string{"metadata.name: Forbidden"}},
		{
			Name: "system class as global default",
			Obj: func() *schedulingv1.PriorityClass {
				pc := class("system-cluster-critical", 2000000000)
				pc.GlobalDefault = true
				return pc
			}(),
			Want: []string{"metadata.name: Forbidden"},
		},
		{
			Name: "unknown preemption policy",
			Obj: func() *schedulingv1.PriorityClass {
				pc := class("high", 1)
				pc.PreemptionPolicy = ptr.To(corev1.PreemptionPolicy("Always"))
				return pc
			}(),
			Want: []string{"preemptionPolicy: Unsupported value"},
		},
		{
			Name: "empty preemption policy",
			Obj: func() *schedulingv1.PriorityClass {
				pc := class("high", 1)
				pc.PreemptionPolicy = ptr.To(corev1.PreemptionPolicy(""))
				return pc
			}(),
			Want: []string{"preemptionPolicy: Required value"},
		},
	}
	s := store(t)
	registrytest.ValidateChanges(t, s.CreateStrategy, registrytest.ErrorPaths, tests)
}

func TestValidateMessages(t *testing.T) {
	s := store(t)
	tests := []struct {
		pc   *schedulingv1.PriorityClass
		want string
	}{
		{pc: class("too-high", 2000000000), want: "maximum allowed value of a user defined priority is 1000000000"},
		{pc: class("system-node-critical", 5), want: "priority class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical PriorityClass must be 2000001000"},
	}
	for _, tt := range tests {
		t.Run(tt.pc.Name, func(t *testing.T) {
			errs := s.CreateStrategy.Validate(context.Background(), tt.pc)
			if len(errs) != 1 || errs[0].Detail != tt.want {
				t.Errorf("errors: got %v, want one with detail %q", errs, tt.want)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	old := class("high", 1000)
	tests := []registrytest.Mutation[*schedulingv1.PriorityClass]{
		{Name: "description and global default may change", Mutate: func(pc *schedulingv1.PriorityClass) { pc.Description, pc.GlobalDefault = "d", true }, Want: []string{}},
		{Name: "value is immutable", Mutate: func(pc *schedulingv1.PriorityClass) { pc.Value = 2000 }, Want: []string{"value: Forbidden"}},
		{
			Name:   "preemptionPolicy is immutable",
			Mutate: func(pc *schedulingv1.PriorityClass) { pc.PreemptionPolicy = ptr.To(corev1.PreemptNever) },
			Want:   []string{"preemptionPolicy: Invalid value"},
		},
	}
	s := store(t)
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			pc := old.DeepCopy()
			tt.Mutate(pc)
			got := registrytest.ErrorPaths(s.UpdateStrategy.ValidateUpdate(context.Background(), pc, old))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareForCreateAndUpdate(t *testing.T) {
	s := store(t)
	pc := class("high", 1000)
	s.CreateStrategy.PrepareForCreate(context.Background(), pc)
	if pc.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", pc.Generation)
	}
	// Upstream never counts generation on update.
	updated := pc.DeepCopy()
	updated.Description = "changed"
	s.UpdateStrategy.PrepareForUpdate(context.Background(), updated, pc)
	if updated.Generation != 1 {
		t.Errorf("generation after PrepareForUpdate: got %d, want 1", updated.Generation)
	}
}

func TestDeleteRefusesSystemClasses(t *testing.T) {
	mem, r := newREST(t)
	for _, pc := range []*schedulingv1.PriorityClass{class("system-node-critical", 2000001000), class("high", 10)} {
		key, err := r.KeyFunc(context.Background(), pc.Name)
		if err != nil {
			t.Fatalf("KeyFunc: %v", err)
		}
		mem.Seed(t, key, pc)
	}
	tests := []struct {
		name  string
		check func(error) bool
		want  string
	}{
		{name: "system-node-critical", check: apierrors.IsForbidden, want: "Forbidden"},
		{name: "system-cluster-critical", check: apierrors.IsForbidden, want: "Forbidden"},
		{name: "high", check: func(err error) bool { return err == nil }, want: "no error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := r.Delete(context.Background(), tt.name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
			if !tt.check(err) {
				t.Errorf("Delete: got %v, want %s", err, tt.want)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, store(t), class("high", 1), fields.Set{"metadata.name": "high"})
}

func TestTable(t *testing.T) {
	never := class("batch", -10)
	never.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	never.GlobalDefault = true
	tests := []registrytest.Row{
		{Name: "default policy", Obj: class("high", 1000), Want: []any{"high", int64(1000), false, "<unknown>", "PreemptLowerPriority"}},
		{Name: "global default, Never", Obj: never, Want: []any{"batch", int64(-10), true, "<unknown>", "Never"}},
	}
	s := store(t)
	registrytest.CheckTable(t, s, []string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"}, tests...)
}
