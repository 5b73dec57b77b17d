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

package csidriver

import (
	"slices"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of csidrivers. Names are DNS subdomains
// (the strategy's default), as upstream's ValidateCSIDriverName.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	// As upstream: no generation on create, a spec change counts one.
	s.OnUpdate = func(obj, old runtime.Object) {
		d, oldD := obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver)
		if !apiequality.Semantic.DeepEqual(d.Spec, oldD.Spec) {
			d.Generation = oldD.Generation + 1
		}
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validateSpec(&obj.(*storagev1.CSIDriver).Spec) }
	// As upstream (CSIServiceAccountTokenSecrets is GA): token requests
	// without serviceAccountTokenInSecrets, on create or when they change.
	s.Warnings = func(obj, old runtime.Object) []string {
		spec := &obj.(*storagev1.CSIDriver).Spec
		if old != nil && apiequality.Semantic.DeepEqual(spec.TokenRequests, old.(*storagev1.CSIDriver).Spec.TokenRequests) {
			return nil
		}
		if len(spec.TokenRequests) > 0 && spec.ServiceAccountTokenInSecrets == nil {
			return []string{"spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes"}
		}
		return nil
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		spec, oldSpec := &obj.(*storagev1.CSIDriver).Spec, &old.(*storagev1.CSIDriver).Spec
		errs := validateSpec(spec)
		// Upstream's path for attachRequired, misspelt as here.
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(spec.AttachRequired, oldSpec.AttachRequired, specPath.Child("attachedRequired"))...)
		return append(errs, apimachineryvalidation.ValidateImmutableField(spec.VolumeLifecycleModes, oldSpec.VolumeLifecycleModes, specPath.Child("volumeLifecycleModes"))...)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: storagev1.Resource("csidrivers"),
		Singular: "csidriver",
		New:      func() runtime.Object { return &storagev1.CSIDriver{} },
		NewList:  func() runtime.Object { return &storagev1.CSIDriverList{} },
		Strategy: s,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"csidrivers": store}, nil
}

var docs = storagev1.CSIDriverSpec{}.SwaggerDoc()

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "AttachRequired", Type: "boolean", Description: docs["attachRequired"]},
		{Name: "PodInfoOnMount", Type: "boolean", Description: docs["podInfoOnMount"]},
		{Name: "StorageCapacity", Type: "boolean", Description: docs["storageCapacity"]},
		{Name: "TokenRequests", Type: "string", Description: docs["tokenRequests"]},
		{Name: "RequiresRepublish", Type: "boolean", Description: docs["requiresRepublish"]},
		{Name: "Modes", Type: "string", Description: docs["volumeLifecycleModes"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		d := obj.(*storagev1.CSIDriver)
		tokenRequests := "<unset>"
		if d.Spec.TokenRequests != nil {
			var audiences []string
			for _, r := range d.Spec.TokenRequests {
				audiences = append(audiences, r.Audience)
			}
			tokenRequests = strings.Join(audiences, ",")
		}
		var modes []string
		for _, m := range d.Spec.VolumeLifecycleModes {
			modes = append(modes, string(m))
		}
		modesCell := strings.Join(modes, ",")
		if modesCell == "" {
			modesCell = "<none>"
		}
		return []any{d.Name, deref(d.Spec.AttachRequired, true), deref(d.Spec.PodInfoOnMount, false), deref(d.Spec.StorageCapacity, false),
			tokenRequests, deref(d.Spec.RequiresRepublish, false), modesCell, registry.Age(d.CreationTimestamp)}
	},
}

func deref(b *bool, unset bool) bool {
	if b == nil {
		return unset
	}
	return *b
}

var (
	specPath                = field.NewPath("spec")
	supportedFSGroupPolicy  = []string{string(storagev1.FileFSGroupPolicy), string(storagev1.NoneFSGroupPolicy), string(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)}
	supportedLifecycleModes = []string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}
)

// validateSpec is upstream's validateCSIDriverSpec with its 1.37 default
// gates: the booleans the defaults fill in are required, and the rest
// takes known values.
func validateSpec(spec *storagev1.CSIDriverSpec) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value *bool
	}{
		{"attachedRequired", spec.AttachRequired}, // upstream's path, misspelt
		{"podInfoOnMount", spec.PodInfoOnMount},
		{"storageCapacity", spec.StorageCapacity},
	} {
		if f.value == nil {
			errs = append(errs, field.Required(specPath.Child(f.name), ""))
		}
	}
	if p := spec.FSGroupPolicy; p != nil && !slices.Contains(supportedFSGroupPolicy, string(*p)) {
		errs = append(errs, field.NotSupported(specPath.Child("fsGroupPolicy"), *p, supportedFSGroupPolicy))
	}
	errs = append(errs, validateTokenRequests(spec.TokenRequests)...)
	for _, m := range spec.VolumeLifecycleModes {
		if !slices.Contains(supportedLifecycleModes, string(m)) {
			errs = append(errs, field.NotSupported(specPath.Child("volumeLifecycleModes"), m, supportedLifecycleModes))
		}
	}
	if spec.SELinuxMount == nil {
		errs = append(errs, field.Required(specPath.Child("seLinuxMount"), ""))
	}
	if p := spec.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < 10 {
		errs = append(errs, field.Invalid(specPath.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if spec.ServiceAccountTokenInSecrets != nil && len(spec.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(specPath.Child("serviceAccountTokenInSecrets"), spec.ServiceAccountTokenInSecrets,
			"serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	if spec.PreventPodSchedulingIfMissing == nil {
		errs = append(errs, field.Required(specPath.Child("preventPodSchedulingIfMissing"), ""))
	}
	return errs
}

// validateTokenRequests: audiences are unique, and expirations between
// ten minutes and 2^32 seconds.
func validateTokenRequests(requests []storagev1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	audiences := sets.New[string]()
	for i, r := range requests {
		p := specPath.Child("tokenRequests").Index(i)
		if audiences.Has(r.Audience) {
			errs = append(errs, field.Duplicate(p.Child("audience"), r.Audience))
			continue
		}
		audiences.Insert(r.Audience)
		if r.ExpirationSeconds == nil {
			continue
		}
		if *r.ExpirationSeconds < int64((10 * time.Minute).Seconds()) {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *r.ExpirationSeconds > 1<<32 {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return errs
}
