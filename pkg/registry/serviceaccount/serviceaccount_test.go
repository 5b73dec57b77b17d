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

package serviceaccount

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newServiceAccount(name, namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: "uid-1", ResourceVersion: "1"}}
}

func TestStorage(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "serviceaccounts")
	if !rest.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if diff := cmp.Diff([]string{"sa"}, rest.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if rest.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.ServiceAccount]{
		{Name: "valid", Obj: newServiceAccount("builder", "default"), Want: []string{}},
		{Name: "dotted name", Obj: newServiceAccount("system.builder", "default"), Want: []string{}},
		{Name: "invalid name", Obj: newServiceAccount("Builder_1", "default"), Want: []string{"metadata.name: Invalid value"}},
		{Name: "no namespace", Obj: newServiceAccount("builder", ""), Want: []string{"metadata.namespace: Required value"}},
	}
	rest := registrytest.REST(t, NewStorage, "serviceaccounts")
	registrytest.ValidateChanges(t, rest.CreateStrategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	old := newServiceAccount("builder", "default")
	tests := []registrytest.Change[*corev1.ServiceAccount]{
		{
			Name: "secrets may change",
			Obj: func() *corev1.ServiceAccount {
				sa := old.DeepCopy()
				sa.Secrets = []corev1.ObjectReference{{Name: "token"}}
				return sa
			}(),
			Want: []string{},
		},
		{Name: "name is immutable", Obj: newServiceAccount("other", "default"), Want: []string{"metadata.name: Invalid value"}},
	}
	rest := registrytest.REST(t, NewStorage, "serviceaccounts")
	registrytest.RunChanges(t, "ValidateUpdate errors", tests, func(obj, _ *corev1.ServiceAccount) []string {
		return registrytest.ErrorPaths(registrytest.ValidateUpdate(rest.UpdateStrategy, obj, old))
	})
}

func TestPrepareKeepsSecretNamesOnly(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "serviceaccounts")
	sa := newServiceAccount("builder", "default")
	sa.Secrets = []corev1.ObjectReference{{Name: "token", Namespace: "other", Kind: "Secret", UID: "uid-2"}}
	want := []corev1.ObjectReference{{Name: "token"}}
	rest.CreateStrategy.PrepareForCreate(context.Background(), sa)
	if diff := cmp.Diff(want, sa.Secrets); diff != "" {
		t.Errorf("secrets after PrepareForCreate (-want +got):\n%s", diff)
	}
	sa.Secrets[0].Kind = "Secret"
	rest.UpdateStrategy.PrepareForUpdate(context.Background(), sa, newServiceAccount("builder", "default"))
	if diff := cmp.Diff(want, sa.Secrets); diff != "" {
		t.Errorf("secrets after PrepareForUpdate (-want +got):\n%s", diff)
	}
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "serviceaccounts")
	registrytest.CheckFields(t, rest, newServiceAccount("builder", "default"), fields.Set{"metadata.name": "builder", "metadata.namespace": "default"})
}

// TestTable: upstream's columns since 1.30, Name and Age (no Secrets, not
// even for an account that lists some).
func TestTable(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "serviceaccounts")
	sa := newServiceAccount("builder", "default")
	sa.Secrets = []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}
	table, err := rest.ConvertToTable(context.Background(), sa, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	if diff := cmp.Diff([]string{"Name", "Age"}, registrytest.ColumnNames(table)); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: got %d, want 1", len(table.Rows))
	}
	if diff := cmp.Diff([]any{"builder", "<unknown>"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
