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
	"crypto/tls"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Storage is the storage of secrets.
type Storage struct {
	Secrets *registry.REST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"secrets": s.Secrets}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of secrets.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	s := registry.NewStrategy(true)
	s.OnCreate = func(obj runtime.Object) { mergeStringData(obj.(*corev1.Secret)) }
	s.OnUpdate = func(obj, old runtime.Object) {
		sec := obj.(*corev1.Secret)
		mergeStringData(sec)
		if sec.Type == "" {
			sec.Type = old.(*corev1.Secret).Type
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.Secret)) }
	s.Warnings = func(obj, _ runtime.Object) []string { // a TLS secret's key that does not match its certificate
		if sec := obj.(*corev1.Secret); sec.Type == corev1.SecretTypeTLS {
			if _, err := tls.X509KeyPair(sec.Data[corev1.TLSCertKey], sec.Data[corev1.TLSPrivateKeyKey]); err != nil {
				return []string{err.Error()}
			}
		}
		return nil
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*corev1.Secret), old.(*corev1.Secret))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: corev1.Resource("secrets"),
		Singular: "secret",
		New:      func() runtime.Object { return &corev1.Secret{} },
		NewList:  func() runtime.Object { return &corev1.SecretList{} },
		Strategy: s,
		Fields:   func(obj runtime.Object) fields.Set { return api.SecretFields(obj.(*corev1.Secret)) },
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "Type", Type: "string", Description: "The type of the secret."},
				{Name: "Data", Type: "string", Description: "Number of keys."},
				registry.AgeColumn,
			},
			Cells: func(obj runtime.Object) []any {
				sec := obj.(*corev1.Secret)
				return []any{sec.Name, string(sec.Type), int64(len(sec.Data)), registry.Age(sec.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return &Storage{Secrets: store}, nil
}

// mergeStringData folds the write-only stringData into data, as upstream's
// v1-to-internal conversion does; stringData wins on conflicts and is never stored.
func mergeStringData(sec *corev1.Secret) {
	if len(sec.StringData) == 0 {
		sec.StringData = nil
		return
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	for k, v := range sec.StringData {
		sec.Data[k] = []byte(v)
	}
	sec.StringData = nil
}
