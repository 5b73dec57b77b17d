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

package configmap

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newConfigMap(data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Data:       data,
		BinaryData: binary,
	}
}

func TestStorage(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "configmaps")
	if !rest.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if diff := cmp.Diff([]string{"cm"}, rest.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	if rest.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false")
	}
}

func TestValidate(t *testing.T) {
	const mib = 1024 * 1024
	tests := []registrytest.Change[*corev1.ConfigMap]{
		{
			Name: "valid keys",
			Obj:  newConfigMap(map[string]string{"app.properties": "a=b", "KEY_1": "v", "-dash": ""}, map[string][]byte{"logo.png": {1, 2}}),
			Want: []string{},
		},
		{
			Name: "data key with a slash",
			Obj:  newConfigMap(map[string]string{"a/b": "v"}, nil),
			Want: []string{"data[a/b]: Invalid value"},
		},
		{
			Name: "data key . and ..",
			Obj:  newConfigMap(map[string]string{".": "v", "..": "v"}, nil),
			Want: []string{"data[..]: Invalid value", "data[.]: Invalid value"},
		},
		{
			Name: "binaryData key with a space",
			Obj:  newConfigMap(nil, map[string][]byte{"a b": {1}}),
			Want: []string{"binaryData[a b]: Invalid value"},
		},
		{
			Name: "key in both data and binaryData",
			Obj:  newConfigMap(map[string]string{"k": "v"}, map[string][]byte{"k": {1}}),
			Want: []string{"data[k]: Invalid value"},
		},
		{
			Name: "exactly 1 MiB in total",
			Obj:  newConfigMap(map[string]string{"a": strings.Repeat("x", mib/2)}, map[string][]byte{"b": make([]byte, mib/2)}),
			Want: []string{},
		},
		{
			Name: "one byte over 1 MiB across data and binaryData",
			Obj:  newConfigMap(map[string]string{"a": strings.Repeat("x", mib/2)}, map[string][]byte{"b": make([]byte, mib/2+1)}),
			Want: []string{"[]: Too long"}, // the whole object, as upstream reports it
		},
		{
			Name: "invalid name",
			Obj: func() *corev1.ConfigMap {
				cm := newConfigMap(nil, nil)
				cm.Name = "App_Config"
				return cm
			}(),
			Want: []string{"metadata.name: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "configmaps").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

// TestDuplicateKeyAsUpstream: a key in both data and binaryData, in
// kube-apiserver 1.37's words and order.
func TestDuplicateKeyAsUpstream(t *testing.T) {
	want := []string{
		`data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
		`data[bad key]: Invalid value: "bad key": duplicate of key present in binaryData`,
		`binaryData[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
	}
	var got []string
	for _, err := range validate(newConfigMap(map[string]string{"bad key": "x"}, map[string][]byte{"bad key": []byte("x")})) {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestValidateUpdate(t *testing.T) {
	with := func(immutable *bool, data map[string]string, binary map[string][]byte) *corev1.ConfigMap {
		cm := newConfigMap(data, binary)
		cm.Immutable = immutable
		return cm
	}
	data := map[string]string{"k": "v"}
	binary := map[string][]byte{"b": {1}}
	tests := []struct {
		name     string
		obj, old *corev1.ConfigMap
		want     []string
	}{
		{
			name: "mutable: data may change",
			old:  with(nil, data, binary),
			obj:  with(nil, map[string]string{"k": "w"}, map[string][]byte{"b": {2}}),
			want: []string{},
		},
		{
			name: "immutable false: data may change and immutable may be set",
			old:  with(ptr.To(false), data, nil),
			obj:  with(ptr.To(true), map[string]string{"k": "w"}, nil),
			want: []string{},
		},
		{
			name: "immutable: unchanged",
			old:  with(ptr.To(true), data, binary),
			obj:  with(ptr.To(true), map[string]string{"k": "v"}, map[string][]byte{"b": {1}}),
			want: []string{},
		},
		{
			name: "immutable: labels may change",
			old:  with(ptr.To(true), data, nil),
			obj: func() *corev1.ConfigMap {
				cm := with(ptr.To(true), data, nil)
				cm.Labels = map[string]string{"a": "b"}
				return cm
			}(),
			want: []string{},
		},
		{
			name: "immutable: may not be unset",
			old:  with(ptr.To(true), data, nil),
			obj:  with(nil, data, nil),
			want: []string{"immutable: Forbidden"},
		},
		{
			name: "immutable: may not be set to false",
			old:  with(ptr.To(true), data, nil),
			obj:  with(ptr.To(false), data, nil),
			want: []string{"immutable: Forbidden"},
		},
		{
			name: "immutable: data may not change",
			old:  with(ptr.To(true), data, nil),
			obj:  with(ptr.To(true), map[string]string{"k": "w"}, nil),
			want: []string{"data: Forbidden"},
		},
		{
			name: "immutable: data may not gain a key",
			old:  with(ptr.To(true), data, nil),
			obj:  with(ptr.To(true), map[string]string{"k": "v", "k2": "v"}, nil),
			want: []string{"data: Forbidden"},
		},
		{
			name: "immutable: binaryData may not change",
			old:  with(ptr.To(true), nil, binary),
			obj:  with(ptr.To(true), nil, map[string][]byte{"b": {2}}),
			want: []string{"binaryData: Forbidden"},
		},
		{
			name: "immutable: everything changed",
			old:  with(ptr.To(true), data, binary),
			obj:  with(nil, nil, nil),
			want: []string{"binaryData: Forbidden", "data: Forbidden", "immutable: Forbidden"},
		},
		{
			name: "keys are validated on update too",
			old:  with(nil, data, nil),
			obj:  with(nil, map[string]string{"a/b": "v"}, nil),
			want: []string{"data[a/b]: Invalid value"},
		},
		{
			name: "name is immutable",
			old:  with(nil, data, nil),
			obj: func() *corev1.ConfigMap {
				cm := with(nil, data, nil)
				cm.Name = "other"
				return cm
			}(),
			want: []string{"metadata.name: Invalid value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "configmaps").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registrytest.ErrorPaths(registrytest.ValidateUpdate(strategy, tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateDataSizeError(t *testing.T) {
	errs := validate(&corev1.ConfigMap{Data: map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize+1)}})
	if len(errs) != 1 {
		t.Fatalf("errors: got %v, want one", errs)
	}
	if got, want := errs[0].Type, field.ErrorTypeTooLong; got != want {
		t.Errorf("error type: got %q, want %q", got, want)
	}
	if got, want := errs[0].Detail, fmt.Sprint(corev1.MaxSecretSize); !strings.Contains(got, want) {
		t.Errorf("error detail: got %q, want it to name the limit %s", got, want)
	}
}

func TestPrepareLeavesConfigMapsAlone(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "configmaps")
	cm := newConfigMap(map[string]string{"k": "v"}, map[string][]byte{"b": {1}})
	cm.Immutable = ptr.To(true)
	want := cm.DeepCopy()
	rest.CreateStrategy.PrepareForCreate(context.Background(), cm)
	rest.UpdateStrategy.PrepareForUpdate(context.Background(), cm, newConfigMap(nil, nil))
	if diff := cmp.Diff(want, cm); diff != "" {
		t.Errorf("configmap after PrepareForCreate/PrepareForUpdate (-want +got):\n%s", diff)
	}
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "configmaps")
	registrytest.CheckFields(t, rest, newConfigMap(nil, nil), fields.Set{"metadata.name": "app", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "configmaps")
	cm := newConfigMap(map[string]string{"a": "1", "b": "2"}, map[string][]byte{"c": {3}})
	table, err := rest.ConvertToTable(context.Background(), cm, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Data", "Age"}, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: got %d, want 1", len(table.Rows))
	}
	if diff := cmp.Diff([]any{"app", int64(3), "<unknown>"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
