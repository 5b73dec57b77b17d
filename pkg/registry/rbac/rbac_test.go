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

package rbac

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func podReader() rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}
}

func role(rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "default", UID: "uid-1", ResourceVersion: "1"}, Rules: rules}
}

func clusterRole(rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:pod-reader", UID: "uid-1", ResourceVersion: "1"}, Rules: rules}
}

// subjects are one subject of each kind; defaulting fills in the apiGroups.
func subjects() []rbacv1.Subject {
	return []rbacv1.Subject{
		{Kind: rbacv1.UserKind, Name: "jane"},
		{Kind: rbacv1.GroupKind, Name: "system:authenticated"},
		{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "kube-system"},
	}
}

func roleBinding(mutate func(*rbacv1.RoleBinding)) *rbacv1.RoleBinding {
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-pods", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		RoleRef:    rbacv1.RoleRef{Kind: "Role", Name: "pod-reader"},
		Subjects:   subjects(),
	}
	api.Scheme.Default(b)
	mutate(b)
	return b
}

func clusterRoleBinding(mutate func(*rbacv1.ClusterRoleBinding)) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-pods", UID: "uid-1", ResourceVersion: "1"},
		RoleRef:    rbacv1.RoleRef{Kind: "ClusterRole", Name: "system:pod-reader"},
		Subjects:   subjects(),
	}
	api.Scheme.Default(b)
	mutate(b)
	return b
}

func TestStorage(t *testing.T) {
	tests := []struct {
		resource   string
		namespaced bool
	}{
		{resource: "roles", namespaced: true},
		{resource: "clusterroles", namespaced: false},
		{resource: "rolebindings", namespaced: true},
		{resource: "clusterrolebindings", namespaced: false},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, tt.resource)
			if got, want := store.DefaultQualifiedResource, rbacv1.Resource(tt.resource); got != want {
				t.Errorf("resource: got %v, want %v", got, want)
			}
			if got := store.NamespaceScoped(); got != tt.namespaced {
				t.Errorf("NamespaceScoped: got %v, want %v", got, tt.namespaced)
			}
			if got := store.ShortNames(); len(got) != 0 {
				t.Errorf("ShortNames: got %v, want none", got)
			}
			// As upstream: reconcilers PUT the objects they want.
			if !store.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
				t.Errorf("AllowCreateOnUpdate: got false, want true")
			}
		})
	}
}

func TestStorageKeys(t *testing.T) {
	registrytest.Storages(t, NewStorage, "roles", "clusterrolebindings", "clusterroles", "rolebindings", "roles")
}

func TestPrepareLeavesObjectsAlone(t *testing.T) {
	tests := []struct {
		resource string
		obj, old runtime.Object
	}{
		{resource: "roles", obj: role(podReader()), old: role()},
		{resource: "clusterroles", obj: clusterRole(podReader()), old: clusterRole()},
		{resource: "rolebindings", obj: roleBinding(func(*rbacv1.RoleBinding) {}), old: roleBinding(func(b *rbacv1.RoleBinding) { b.Subjects = nil })},
		{resource: "clusterrolebindings", obj: clusterRoleBinding(func(*rbacv1.ClusterRoleBinding) {}), old: clusterRoleBinding(func(b *rbacv1.ClusterRoleBinding) { b.Subjects = nil })},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, tt.resource)
			want := tt.obj.DeepCopyObject()
			store.CreateStrategy.PrepareForCreate(context.Background(), tt.obj)
			store.UpdateStrategy.PrepareForUpdate(context.Background(), tt.obj, tt.old)
			if diff := cmp.Diff(want, tt.obj); diff != "" {
				t.Errorf("object after PrepareForCreate/PrepareForUpdate (-want +got):\n%s", diff)
			}
		})
	}
}
