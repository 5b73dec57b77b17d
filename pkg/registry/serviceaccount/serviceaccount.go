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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Storage is the storage of serviceaccounts.
type Storage struct {
	ServiceAccounts *registry.REST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"serviceaccounts": s.ServiceAccounts}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of serviceaccounts.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	s := registry.NewStrategy(true)
	s.OnCreate = func(obj runtime.Object) { cleanSecretReferences(obj.(*corev1.ServiceAccount)) }
	s.OnUpdate = func(obj, _ runtime.Object) { cleanSecretReferences(obj.(*corev1.ServiceAccount)) }
	s.Warnings = func(obj, old runtime.Object) []string { // of the deprecated annotation, when it is newly set
		const annotation = "kubernetes.io/enforce-mountable-secrets"
		if _, had := annotationsOf(old)[annotation]; had {
			return nil
		}
		if _, ok := obj.(*corev1.ServiceAccount).Annotations[annotation]; ok {
			return []string{"metadata.annotations[" + annotation + "]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets"}
		}
		return nil
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("serviceaccounts"),
		Singular:   "serviceaccount",
		ShortNames: []string{"sa"},
		New:        func() runtime.Object { return &corev1.ServiceAccount{} },
		NewList:    func() runtime.Object { return &corev1.ServiceAccountList{} },
		Strategy:   s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{registry.NameColumn, registry.AgeColumn}, // upstream's since 1.30 (no Secrets)
			Cells: func(obj runtime.Object) []any {
				sa := obj.(*corev1.ServiceAccount)
				return []any{sa.Name, registry.Age(sa.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return &Storage{ServiceAccounts: store}, nil
}

// cleanSecretReferences keeps only the name of each secret reference, as
// upstream's strategy does.
func cleanSecretReferences(sa *corev1.ServiceAccount) {
	for i, secret := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: secret.Name}
	}
}

// annotationsOf returns the annotations of sa, a ServiceAccount or nil.
func annotationsOf(sa runtime.Object) map[string]string {
	if sa == nil {
		return nil
	}
	return sa.(*corev1.ServiceAccount).Annotations
}
