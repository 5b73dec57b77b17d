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

package secret

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newSecret(typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Type:       typ,
		Data:       data,
	}
}

func TestPrepareFoldsStringDataIntoData(t *testing.T) {
	tests := []struct {
		name       string
		data       map[string][]byte
		stringData map[string]string
		want       map[string][]byte
	}{
		{
			name: "neither",
			want: nil,
		},
		{
			name: "data only",
			data: map[string][]byte{"a": []byte("1")},
			want: map[string][]byte{"a": []byte("1")},
		},
		{
			name:       "stringData only",
			stringData: map[string]string{"user": "admin"},
			want:       map[string][]byte{"user": []byte("admin")},
		},
		{
			name:       "both: merged, stringData wins on conflicts",
			data:       map[string][]byte{"user": []byte("old"), "keep": []byte("k")},
			stringData: map[string]string{"user": "new", "added": "x"},
			want:       map[string][]byte{"user": []byte("new"), "keep": []byte("k"), "added": []byte("x")},
		},
		{
			name:       "empty stringData map",
			data:       map[string][]byte{"a": []byte("1")},
			stringData: map[string]string{},
			want:       map[string][]byte{"a": []byte("1")},
		},
	}
	rest := registrytest.REST(t, NewStorage, "secrets")
	ctx := context.Background()
	for _, tt := range tests {
		for _, op := range []string{"create", "update"} {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				sec := newSecret(corev1.SecretTypeOpaque, tt.data)
				sec.StringData = tt.stringData
				if op == "create" {
					rest.CreateStrategy.PrepareForCreate(ctx, sec)
				} else {
					rest.UpdateStrategy.PrepareForUpdate(ctx, sec, newSecret(corev1.SecretTypeOpaque, map[string][]byte{"old": []byte("o")}))
				}
				if diff := cmp.Diff(tt.want, sec.Data); diff != "" {
					t.Errorf("data (-want +got):\n%s", diff)
				}
				if sec.StringData != nil {
					t.Errorf("stringData: got %v, want nil (never stored)", sec.StringData)
				}
			})
		}
	}
}

func TestValidate(t *testing.T) {
	tlsData := map[string][]byte{corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key")}
	tests := []registrytest.Change[*corev1.Secret]{
		{
			Name: "opaque",
			Obj:  newSecret(corev1.SecretTypeOpaque, map[string][]byte{"password": []byte("x"), ".hidden": nil}),
			Want: []string{},
		},
		{
			Name: "invalid key",
			Obj:  newSecret(corev1.SecretTypeOpaque, map[string][]byte{"a/b": []byte("x")}),
			Want: []string{"data[a/b]: Invalid value"},
		},
		{
			Name: "exactly 1 MiB",
			Obj:  newSecret(corev1.SecretTypeOpaque, map[string][]byte{"a": make([]byte, corev1.MaxSecretSize/2), "b": make([]byte, corev1.MaxSecretSize/2)}),
			Want: []string{},
		},
		{
			Name: "over 1 MiB",
			Obj:  newSecret(corev1.SecretTypeOpaque, map[string][]byte{"a": make([]byte, corev1.MaxSecretSize/2), "b": make([]byte, corev1.MaxSecretSize/2+1)}),
			Want: []string{"data: Too long"},
		},
		{
			Name: "tls with both keys",
			Obj:  newSecret(corev1.SecretTypeTLS, tlsData),
			Want: []string{},
		},
		{
			Name: "tls without keys",
			Obj:  newSecret(corev1.SecretTypeTLS, nil),
			Want: []string{"data[tls.crt]: Required value", "data[tls.key]: Required value"},
		},
		{
			Name: "tls without the private key",
			Obj:  newSecret(corev1.SecretTypeTLS, map[string][]byte{corev1.TLSCertKey: []byte("cert")}),
			Want: []string{"data[tls.key]: Required value"},
		},
		{
			Name: "dockerconfigjson with its key",
			Obj:  newSecret(corev1.SecretTypeDockerConfigJson, map[string][]byte{corev1.DockerConfigJsonKey: []byte("{}")}),
			Want: []string{},
		},
		{
			Name: "dockerconfigjson without its key",
			Obj:  newSecret(corev1.SecretTypeDockerConfigJson, map[string][]byte{"config.json": []byte("{}")}),
			Want: []string{"data[.dockerconfigjson]: Required value"},
		},
		{
			Name: "service account token without the annotation",
			Obj:  newSecret(corev1.SecretTypeServiceAccountToken, nil),
			Want: []string{"metadata.annotations[kubernetes.io/service-account.name]: Required value"},
		},
		{
			Name: "service account token with the annotation",
			Obj: func() *corev1.Secret {
				s := newSecret(corev1.SecretTypeServiceAccountToken, nil)
				s.Annotations = map[string]string{corev1.ServiceAccountNameKey: "builder"}
				return s
			}(),
			Want: []string{},
		},
		{
			Name: "invalid name and missing namespace",
			Obj: func() *corev1.Secret {
				s := newSecret(corev1.SecretTypeOpaque, nil)
				s.Name, s.Namespace = "Creds!", ""
				return s
			}(),
			Want: []string{"metadata.name: Invalid value", "metadata.namespace: Required value"},
		},
	}
	strategy := registrytest.REST(t, NewStorage, "secrets").CreateStrategy
	registrytest.ValidateChanges(t, strategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	data := map[string][]byte{"k": []byte("v")}
	with := func(typ corev1.SecretType, immutable *bool, data map[string][]byte, stringData map[string]string) *corev1.Secret {
		s := newSecret(typ, maps.Clone(data)) // PrepareForUpdate writes to data
		s.Immutable = immutable
		s.StringData = stringData
		return s
	}
	tests := []struct {
		name     string
		obj, old *corev1.Secret
		want     []string
	}{
		{
			name: "mutable: data may change",
			old:  with(corev1.SecretTypeOpaque, nil, data, nil),
			obj:  with(corev1.SecretTypeOpaque, nil, map[string][]byte{"k": []byte("w")}, nil),
			want: []string{},
		},
		{
			name: "type is immutable",
			old:  with(corev1.SecretTypeOpaque, nil, data, nil),
			obj:  with("example.com/other", nil, data, nil),
			want: []string{"type: Invalid value"},
		},
		{
			name: "immutable: unchanged",
			old:  with(corev1.SecretTypeOpaque, ptr.To(true), data, nil),
			obj:  with(corev1.SecretTypeOpaque, ptr.To(true), map[string][]byte{"k": []byte("v")}, nil),
			want: []string{},
		},
		{
			name: "immutable: may not be unset",
			old:  with(corev1.SecretTypeOpaque, ptr.To(true), data, nil),
			obj:  with(corev1.SecretTypeOpaque, nil, data, nil),
			want: []string{"immutable: Forbidden"},
		},
		{
			name: "immutable: data may not change",
			old:  with(corev1.SecretTypeOpaque, ptr.To(true), data, nil),
			obj:  with(corev1.SecretTypeOpaque, ptr.To(true), map[string][]byte{"k": []byte("w")}, nil),
			want: []string{"data: Forbidden"},
		},
		{
			name: "immutable: stringData may not change data either",
			old:  with(corev1.SecretTypeOpaque, ptr.To(true), data, nil),
			obj:  with(corev1.SecretTypeOpaque, ptr.To(true), data, map[string]string{"k": "w"}),
			want: []string{"data: Forbidden"},
		},
		{
			name: "immutable: stringData equal to data is no change",
			old:  with(corev1.SecretTypeOpaque, ptr.To(true), data, nil),
			obj:  with(corev1.SecretTypeOpaque, ptr.To(true), nil, map[string]string{"k": "v"}),
			want: []string{},
		},
		{
			name: "type-specific validation runs on update",
			old:  with(corev1.SecretTypeTLS, nil, map[string][]byte{corev1.TLSCertKey: nil, corev1.TLSPrivateKeyKey: nil}, nil),
			obj:  with(corev1.SecretTypeTLS, nil, map[string][]byte{corev1.TLSCertKey: nil}, nil),
			want: []string{"data[tls.key]: Required value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "secrets")
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// As the generic store does: prepare (folding stringData), then validate.
			rest.UpdateStrategy.PrepareForUpdate(ctx, tt.obj, tt.old)
			got := registrytest.ErrorPaths(rest.UpdateStrategy.ValidateUpdate(ctx, tt.obj, tt.old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "secrets")
	sec := newSecret(corev1.SecretTypeTLS, nil)
	registrytest.CheckFields(t, rest, sec, fields.Set{"metadata.name": "creds", "metadata.namespace": "default", "type": "kubernetes.io/tls"})
	tests := []struct {
		selector string
		want     bool
	}{
		{selector: "type=kubernetes.io/tls", want: true},
		{selector: "type=Opaque", want: false},
		{selector: "type!=Opaque,metadata.name=creds", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			pred := rest.PredicateFunc(labels.Everything(), fields.ParseSelectorOrDie(tt.selector))
			got, err := pred.Matches(sec)
			if err != nil || got != tt.want {
				t.Errorf("Matches(%q): got (%v, %v), want (%v, nil)", tt.selector, got, err, tt.want)
			}
		})
	}
}

func TestTable(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "secrets")
	sec := newSecret(corev1.SecretTypeBasicAuth, map[string][]byte{"username": nil, "password": nil})
	table, err := rest.ConvertToTable(context.Background(), sec, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Type", "Data", "Age"}, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: got %d, want 1", len(table.Rows))
	}
	if diff := cmp.Diff([]any{"creds", "kubernetes.io/basic-auth", int64(2), "<unknown>"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

func TestNoSecretDataInErrors(t *testing.T) {
	// Field errors are returned to clients and logged: a rejected key may
	// appear, the secret's values may not.
	const value = "hunter2-very-secret"
	sec := newSecret(corev1.SecretTypeOpaque, map[string][]byte{"bad/key": []byte(value)})
	for _, e := range registrytest.REST(t, NewStorage, "secrets").CreateStrategy.Validate(context.Background(), sec) {
		if strings.Contains(e.Error(), value) {
			t.Errorf("error %q: got the secret value in it, want only the key", e.Error())
		}
	}
}
