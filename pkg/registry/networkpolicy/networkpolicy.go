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

package networkpolicy

import (
	"reflect"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of networkpolicies.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.OnCreate = func(obj runtime.Object) { obj.(*networkingv1.NetworkPolicy).Generation = 1 }
	s.OnUpdate = func(obj, old runtime.Object) {
		np, oldNP := obj.(*networkingv1.NetworkPolicy), old.(*networkingv1.NetworkPolicy)
		if !reflect.DeepEqual(np.Spec, oldNP.Spec) { // upstream's comparison, not the semantic one
			np.Generation = oldNP.Generation + 1
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validatePolicy(&obj.(*networkingv1.NetworkPolicy).Spec, nil)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validatePolicy(&obj.(*networkingv1.NetworkPolicy).Spec, &old.(*networkingv1.NetworkPolicy).Spec)
	}
	s.Warnings = func(obj, _ runtime.Object) []string { return warnings(&obj.(*networkingv1.NetworkPolicy).Spec) }
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   networkingv1.Resource("networkpolicies"),
		Singular:   "networkpolicy",
		ShortNames: []string{"netpol"},
		New:        func() runtime.Object { return &networkingv1.NetworkPolicy{} },
		NewList:    func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
		Strategy:   s,
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				registry.NameColumn,
				{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
				registry.AgeColumn,
			},
			Cells: func(obj runtime.Object) []any {
				np := obj.(*networkingv1.NetworkPolicy)
				return []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), registry.Age(np.CreationTimestamp)}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"networkpolicies": store}, nil
}

// warnings are kube-apiserver's of a policy's create and update: CIDRs in
// forms it deprecates.
func warnings(spec *networkingv1.NetworkPolicySpec) []string {
	var warnings []string
	block := func(b *networkingv1.IPBlock, p *field.Path) {
		if b == nil {
			return
		}
		warnings = append(warnings, validation.GetWarningsForCIDR(p.Child("cidr"), b.CIDR)...)
		for k, except := range b.Except {
			warnings = append(warnings, validation.GetWarningsForCIDR(p.Child("except").Index(k), except)...)
		}
	}
	for i, rule := range spec.Ingress {
		for j, peer := range rule.From {
			block(peer.IPBlock, field.NewPath("spec", "ingress").Index(i).Child("from").Index(j).Child("ipBlock"))
		}
	}
	for i, rule := range spec.Egress {
		for j, peer := range rule.To {
			block(peer.IPBlock, field.NewPath("spec", "egress").Index(i).Child("to").Index(j).Child("ipBlock"))
		}
	}
	return warnings
}
