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
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of roles, clusterroles, rolebindings and
// clusterrolebindings, stored and validated; WithEscalationChecks adds
// upstream's escalation checks.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	resources := []registry.Resource{
		{
			Resource: rbacv1.Resource("roles"),
			Singular: "role",
			New:      func() runtime.Object { return &rbacv1.Role{} },
			NewList:  func() runtime.Object { return &rbacv1.RoleList{} },
			Strategy: strategy(true, validateRole),
			Table:    roleTable,
		},
		{
			Resource: rbacv1.Resource("clusterroles"),
			Singular: "clusterrole",
			New:      func() runtime.Object { return &rbacv1.ClusterRole{} },
			NewList:  func() runtime.Object { return &rbacv1.ClusterRoleList{} },
			Strategy: strategy(false, validateClusterRole),
			Table:    roleTable,
		},
		{
			Resource: rbacv1.Resource("rolebindings"),
			Singular: "rolebinding",
			New:      func() runtime.Object { return &rbacv1.RoleBinding{} },
			NewList:  func() runtime.Object { return &rbacv1.RoleBindingList{} },
			Strategy: strategy(true, validateRoleBinding),
			Table: bindingTable("roleBinding", rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"], func(obj runtime.Object) (metav1.ObjectMeta, rbacv1.RoleRef, []rbacv1.Subject) {
				b := obj.(*rbacv1.RoleBinding)
				return b.ObjectMeta, b.RoleRef, b.Subjects
			}),
		},
		{
			Resource: rbacv1.Resource("clusterrolebindings"),
			Singular: "clusterrolebinding",
			New:      func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
			NewList:  func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
			Strategy: strategy(false, validateClusterRoleBinding),
			Table: bindingTable("clusterRoleBinding", rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], func(obj runtime.Object) (metav1.ObjectMeta, rbacv1.RoleRef, []rbacv1.Subject) {
				b := obj.(*rbacv1.ClusterRoleBinding)
				return b.ObjectMeta, b.RoleRef, b.Subjects
			}),
		},
	}
	storage := map[string]rest.Storage{}
	for _, r := range resources {
		store, err := registry.NewREST(optsGetter, r)
		if err != nil {
			return nil, err
		}
		storage[r.Resource.Resource] = store
	}
	return storage, nil
}

// strategy returns the strategy of one RBAC type: names are path segments
// (upstream's ValidateRBACName), and, as upstream, a PUT of a missing
// object creates it (reconcilers apply the default roles that way).
// validate checks a create (old nil) or an update.
func strategy[T runtime.Object](namespaced bool, validate func(obj, old T) field.ErrorList) registry.Strategy {
	s := registry.NewStrategy(namespaced)
	s.ValidateName = path.ValidatePathSegmentName
	s.CreateOnUpdate = true
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		var none T
		return validate(obj.(T), none)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validate(obj.(T), old.(T))
	}
	return s
}

// roleTable is what upstream shows for roles, which have no printer of
// their own: the default table of name and creation time.
var roleTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	},
	Cells: func(obj runtime.Object) []any {
		m := obj.(metav1.Object)
		return []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}
	},
}

// bindingTable prints a role binding or cluster role binding; kind names
// the type in the column descriptions, as upstream's do.
func bindingTable(kind, roleRefDoc string, parts func(runtime.Object) (metav1.ObjectMeta, rbacv1.RoleRef, []rbacv1.Subject)) registry.Table {
	return registry.Table{
		Columns: []metav1.TableColumnDefinition{
			registry.NameColumn,
			{Name: "Role", Type: "string", Description: roleRefDoc},
			registry.AgeColumn,
			{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
			{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
			{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
		},
		Cells: func(obj runtime.Object) []any {
			m, ref, subjects := parts(obj)
			var users, groups, sas []string
			for _, s := range subjects {
				switch s.Kind {
				case rbacv1.ServiceAccountKind:
					sas = append(sas, s.Namespace+"/"+s.Name)
				case rbacv1.UserKind:
					users = append(users, s.Name)
				case rbacv1.GroupKind:
					groups = append(groups, s.Name)
				}
			}
			return []any{m.Name, ref.Kind + "/" + ref.Name, registry.Age(m.CreationTimestamp),
				strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
		},
	}
}
