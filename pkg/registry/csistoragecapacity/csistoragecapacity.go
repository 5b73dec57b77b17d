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

package csistoragecapacity

import (
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

var capacities = storagev1.Resource("csistoragecapacities")

// NewStorage returns the storage of csistoragecapacities. Names are DNS
// subdomains (the strategy's default), as upstream's
// ValidateStorageCapacityName. Upstream's strategy changes nothing on
// create or update, and counts no generation: nothing the update may
// change is an input of the capacity.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validate(obj.(*storagev1.CSIStorageCapacity), false)
	}
	s.Warnings = func(obj, _ runtime.Object) []string {
		return node.LabelSelectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		c, oldC := obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity)
		// As upstream: a stored selector with a bad label value may keep it.
		errs := validate(c, hasInvalidLabelValue(oldC.NodeTopology))
		return append(errs, validateUpdate(c, oldC)...)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: capacities,
		Singular: "csistoragecapacity",
		New:      func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
		NewList:  func() runtime.Object { return &storagev1.CSIStorageCapacityList{} },
		Strategy: s,
	})
	if err != nil {
		return nil, err
	}
	// Upstream's store prints with the default table, Name and Created
	// At: its printer for the type is not wired in.
	store.TableConvertor = rest.NewDefaultTableConvertor(capacities)
	return map[string]rest.Storage{"csistoragecapacities": store}, nil
}

var (
	nodeTopologyPath     = field.NewPath("nodeTopology")
	storageClassNamePath = field.NewPath("storageClassName")
)

// validate is upstream's ValidateCSIStorageCapacity after the metadata:
// a valid node selector, a storage class name that is a DNS subdomain (so
// not empty), and a capacity that is not negative. The maximum volume
// size is not checked, as upstream does not.
func validate(c *storagev1.CSIStorageCapacity, allowInvalidLabelValue bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(c.NodeTopology, opts, nodeTopologyPath)
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(storageClassNamePath, c.StorageClassName, msg))
	}
	if c.Capacity != nil && c.Capacity.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), apimachineryvalidation.IsNegativeErrorMsg))
	}
	return errs
}

// hasInvalidLabelValue is upstream's hasInvalidLabelValueInLabelSelector.
func hasInvalidLabelValue(selector *metav1.LabelSelector) bool {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}
	return len(metav1validation.ValidateLabelSelector(selector, opts, nil)) > 0
}

// validateUpdate is upstream's ValidateCSIStorageCapacityUpdate beyond the
// metadata: the inputs of the CSI GetCapacity call, the node topology and
// the storage class, are immutable.
func validateUpdate(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(c.NodeTopology, old.NodeTopology) {
		errs = append(errs, field.Invalid(nodeTopologyPath, c.NodeTopology, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	if c.StorageClassName != old.StorageClassName {
		errs = append(errs, field.Invalid(storageClassNamePath, c.StorageClassName, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}
