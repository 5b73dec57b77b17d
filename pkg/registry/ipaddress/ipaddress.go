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

package ipaddress

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Storage is the storage of ipaddresses.
type Storage struct {
	IPAddresses *registry.REST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"ipaddresses": s.IPAddresses}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of ipaddresses.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	s := registry.NewStrategy(false)
	s.ValidateName = func(name string, _ bool) []string { return nameMessages(name) }
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateParent(obj.(*networkingv1.IPAddress).Spec.ParentRef, nil, false)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateParent(obj.(*networkingv1.IPAddress).Spec.ParentRef, old.(*networkingv1.IPAddress).Spec.ParentRef, true)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   networkingv1.Resource("ipaddresses"),
		Singular:   "ipaddress",
		ShortNames: []string{"ip"},
		New:        func() runtime.Object { return &networkingv1.IPAddress{} },
		NewList:    func() runtime.Object { return &networkingv1.IPAddressList{} },
		Strategy:   s,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return &Storage{IPAddresses: store}, nil
}

// table is upstream's: NAME and PARENTREF (resource.group/namespace/name).
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
	},
	Cells: func(obj runtime.Object) []any {
		ip := obj.(*networkingv1.IPAddress)
		parent := "<none>"
		if r := ip.Spec.ParentRef; r != nil {
			parent = strings.ToLower(schema.GroupResource{Group: r.Group, Resource: r.Resource}.String())
			if r.Namespace != "" {
				parent += "/" + r.Namespace
			}
			parent += "/" + r.Name
		}
		return []any{ip.Name, parent}
	},
}

// nameMessages: an IPAddress is named by its address, in canonical form
// (upstream's ValidateIPAddressName).
func nameMessages(name string) []string {
	var msgs []string
	for _, err := range validation.IsValidIP(&field.Path{}, name) {
		msgs = append(msgs, err.Detail)
	}
	return msgs
}
