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

package servicecidr

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	netutils "k8s.io/utils/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// DefaultName is the name of the default ServiceCIDR, which holds the
// service cluster IP range (upstream's DefaultServiceCIDRName).
const DefaultName = "kubernetes"

const groupVersion = "networking.k8s.io/v1"

// NewStorage returns the storage of servicecidrs and servicecidrs/status.
// As upstream's strategies (with ServiceCIDRStatusFieldWiping, on in
// 1.37): a create clears status, an update keeps it; a status update keeps
// spec and the metadata a status write may not change (labels,
// annotations, finalizers, owner references).
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(false)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(&obj.(*networkingv1.ServiceCIDR).Spec, field.NewPath("spec", "cidrs"))
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateUpdate(obj.(*networkingv1.ServiceCIDR), old.(*networkingv1.ServiceCIDR))
	}
	main, status := registry.SpecAndStatus{GroupVersion: groupVersion, StatusKeepsMetadata: true}.Strategies(base)
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: networkingv1.Resource("servicecidrs"),
		Singular: "servicecidr",
		New:      func() runtime.Object { return &networkingv1.ServiceCIDR{} },
		NewList:  func() runtime.Object { return &networkingv1.ServiceCIDRList{} },
		Strategy: main,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"servicecidrs":        store,
		"servicecidrs/status": registry.NewStatusREST(store, status),
	}, nil
}

// table is upstream's printServiceCIDR: NAME, CIDRS (comma-joined), AGE.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		cidr := obj.(*networkingv1.ServiceCIDR)
		return []any{cidr.Name, strings.Join(cidr.Spec.CIDRs, ","), registry.Age(cidr.CreationTimestamp)}
	},
}

// internalSpec prints as upstream's internal ServiceCIDRSpec does in an
// error (it has no JSON tags): {"CIDRs":[...]}.
type internalSpec struct{ CIDRs []string }

// validateSpec is upstream's validateServiceCIDRSpec: one or two CIDRs in
// canonical form, at most one of each IP family.
func validateSpec(spec *networkingv1.ServiceCIDRSpec, p *field.Path) field.ErrorList {
	if len(spec.CIDRs) == 0 {
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	}
	if len(spec.CIDRs) > 2 {
		return field.ErrorList{field.Invalid(p, &internalSpec{CIDRs: spec.CIDRs}, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, cidr := range spec.CIDRs {
		errs = append(errs, validation.IsValidCIDR(p.Index(i), cidr)...)
	}
	if len(spec.CIDRs) == 2 {
		first, second := netutils.IPFamilyOfCIDRString(spec.CIDRs[0]), netutils.IPFamilyOfCIDRString(spec.CIDRs[1])
		if first == second && first != netutils.IPFamilyUnknown {
			errs = append(errs, field.Invalid(p, spec.CIDRs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// validateUpdate is upstream's ValidateServiceCIDRUpdate (but metadata,
// which the strategy checks): the CIDRs are immutable, but for adding a
// second one, of the other family, to a single one (single to dual stack).
func validateUpdate(update, old *networkingv1.ServiceCIDR) field.ErrorList {
	p := field.NewPath("spec", "cidrs")
	var errs field.ErrorList
	switch {
	case len(old.Spec.CIDRs) == len(update.Spec.CIDRs):
		for i, cidr := range old.Spec.CIDRs {
			if cidr != update.Spec.CIDRs[i] {
				errs = append(errs, field.Invalid(p.Index(i), update.Spec.CIDRs[i], apimachineryvalidation.FieldImmutableErrorMsg))
			}
		}
	case len(old.Spec.CIDRs) == 1 && len(update.Spec.CIDRs) == 2:
		if update.Spec.CIDRs[0] != old.Spec.CIDRs[0] {
			errs = append(errs, field.Invalid(p.Index(0), update.Spec.CIDRs[0], apimachineryvalidation.FieldImmutableErrorMsg))
		}
		errs = append(errs, validateSpec(&update.Spec, p)...)
	default:
		errs = append(errs, field.Invalid(p, update.Spec.CIDRs, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}
