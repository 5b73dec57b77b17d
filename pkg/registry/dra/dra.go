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

package dra

import (
	"fmt"
	"maps"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "resource.k8s.io/v1"

// NewStorage returns the storage of resource.k8s.io/v1's resources.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	all := map[string]rest.Storage{}
	for _, add := range []func(generic.RESTOptionsGetter) (map[string]rest.Storage, error){
		deviceClasses, deviceTaintRules, resourceClaims, resourceClaimTemplates, resourceSlices,
	} {
		storage, err := add(optsGetter)
		if err != nil {
			return nil, err
		}
		maps.Copy(all, storage)
	}
	return all, nil
}

// specGeneration counts spec changes in the generation, from 1, as
// upstream's strategies of classes and slices do.
var specGeneration = registry.SpecAndStatus{GroupVersion: groupVersion, Generation: true}

func deviceClasses(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateClass(&obj.(*resourcev1.DeviceClass).Spec, nil)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateClass(&obj.(*resourcev1.DeviceClass).Spec, &old.(*resourcev1.DeviceClass).Spec)
	}
	s.OnCreate = func(obj runtime.Object) { obj.(*resourcev1.DeviceClass).Generation = 1 }
	s.OnUpdate = func(obj, old runtime.Object) {
		c, o := obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass)
		c.Generation = o.Generation
		if !apiequality.Semantic.DeepEqual(c.Spec, o.Spec) {
			c.Generation++
		}
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: resourcev1.Resource("deviceclasses"), Singular: "deviceclass",
		New:      func() runtime.Object { return &resourcev1.DeviceClass{} },
		NewList:  func() runtime.Object { return &resourcev1.DeviceClassList{} },
		Strategy: s, Table: nameAndAge,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"deviceclasses": store}, nil
}

func deviceTaintRules(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(false)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateTaintRule(obj.(*resourcev1.DeviceTaintRule), nil)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateTaintRule(obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule))
	}
	// A changed effect is a new taint: it is added now, unless the update
	// says when.
	base.OnUpdate = func(obj, old runtime.Object) {
		t, o := &obj.(*resourcev1.DeviceTaintRule).Spec.Taint, &old.(*resourcev1.DeviceTaintRule).Spec.Taint
		if t.Effect != o.Effect && t.TimeAdded.Equal(o.TimeAdded) {
			t.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
		}
	}
	taintRules := specGeneration
	taintRules.StatusKeepsMetadata = true
	main, status := taintRules.Strategies(base)
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateTaintRuleStatus(&obj.(*resourcev1.DeviceTaintRule).Status)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: resourcev1.Resource("devicetaintrules"), Singular: "devicetaintrule",
		New:      func() runtime.Object { return &resourcev1.DeviceTaintRule{} },
		NewList:  func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} },
		Strategy: main, Table: taintRuleTable,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"devicetaintrules": store, "devicetaintrules/status": registry.NewStatusREST(store, status)}, nil
}

func resourceClaims(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(true)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateClaim(&obj.(*resourcev1.ResourceClaim).Spec)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateClaimUpdate(&obj.(*resourcev1.ResourceClaim).Spec, &old.(*resourcev1.ResourceClaim).Spec)
	}
	main, status := registry.SpecAndStatus{GroupVersion: groupVersion, StatusKeepsMetadata: true, Drop: func(obj, old runtime.Object) {
		var oldSpec *resourcev1.ResourceClaimSpec
		if old != nil {
			oldSpec = &old.(*resourcev1.ResourceClaim).Spec
		}
		dropClaimSpec(&obj.(*resourcev1.ResourceClaim).Spec, oldSpec)
	}}.Strategies(base)
	keepSpec := status.OnUpdate
	status.OnUpdate = func(obj, old runtime.Object) {
		keepSpec(obj, old)
		claim, oldClaim := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
		dropClaimStatus(&claim.Status, &oldClaim.Status)
		dropDeallocatedDevices(&claim.Status, &oldClaim.Status)
	}
	status.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		claim, oldClaim := obj.(*resourcev1.ResourceClaim), old.(*resourcev1.ResourceClaim)
		return registry.WithDeclarative(validateClaimStatusUpdate(claim, oldClaim), declarativeClaimStatus(field.NewPath("status"), &claim.Status, &oldClaim.Status))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: resourcev1.Resource("resourceclaims"), Singular: "resourceclaim",
		New:      func() runtime.Object { return &resourcev1.ResourceClaim{} },
		NewList:  func() runtime.Object { return &resourcev1.ResourceClaimList{} },
		Strategy: main, Table: claimTable,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"resourceclaims": store, "resourceclaims/status": registry.NewStatusREST(store, status)}, nil
}

func resourceClaimTemplates(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateTemplate(&obj.(*resourcev1.ResourceClaimTemplate).Spec, nil)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateTemplate(&obj.(*resourcev1.ResourceClaimTemplate).Spec, &old.(*resourcev1.ResourceClaimTemplate).Spec)
	}
	s.OnCreate = func(obj runtime.Object) { dropClaimSpec(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, nil) }
	s.OnUpdate = func(obj, old runtime.Object) {
		dropClaimSpec(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, &old.(*resourcev1.ResourceClaimTemplate).Spec.Spec)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: resourcev1.Resource("resourceclaimtemplates"), Singular: "resourceclaimtemplate",
		New:      func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
		NewList:  func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} },
		Strategy: s, Table: nameAndAge,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"resourceclaimtemplates": store}, nil
}

func resourceSlices(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(false)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateResourceSlice(&obj.(*resourcev1.ResourceSlice).Spec, nil)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateResourceSlice(&obj.(*resourcev1.ResourceSlice).Spec, &old.(*resourcev1.ResourceSlice).Spec)
	}
	s.OnCreate = func(obj runtime.Object) {
		rs := obj.(*resourcev1.ResourceSlice)
		rs.Generation = 1
		dropSlice(&rs.Spec, nil)
	}
	s.Warnings = func(obj, _ runtime.Object) []string { // upstream's, on create and update
		if d := obj.(*resourcev1.ResourceSlice).Spec.Driver; d != strings.ToLower(d) {
			return []string{fmt.Sprintf("spec.driver: driver names should be lowercase; %q contains uppercase characters", d)}
		}
		return nil
	}
	s.OnUpdate = func(obj, old runtime.Object) {
		rs, o := obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice)
		rs.Generation = o.Generation
		if !apiequality.Semantic.DeepEqual(rs.Spec, o.Spec) {
			rs.Generation++
		}
		dropSlice(&rs.Spec, &o.Spec)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: resourcev1.Resource("resourceslices"), Singular: "resourceslice",
		New:      func() runtime.Object { return &resourcev1.ResourceSlice{} },
		NewList:  func() runtime.Object { return &resourcev1.ResourceSliceList{} },
		Strategy: s, Table: sliceTable,
		Fields:      func(obj runtime.Object) fields.Set { return api.ResourceSliceFields(obj.(*resourcev1.ResourceSlice)) },
		IndexFields: []string{resourcev1.ResourceSliceSelectorNodeName, resourcev1.ResourceSliceSelectorDriver},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"resourceslices": store}, nil
}

var nameAndAge = registry.Table{
	Columns: []metav1.TableColumnDefinition{registry.NameColumn, registry.AgeColumn},
	Cells: func(obj runtime.Object) []any {
		m := obj.(metav1.Object)
		return []any{m.GetName(), registry.Age(m.GetCreationTimestamp())}
	},
}

var taintDocs = resourcev1.DeviceTaint{}.SwaggerDoc()

var taintRuleTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Key", Type: "string", Description: taintDocs["key"]},
		{Name: "Value", Type: "string", Description: taintDocs["value"]},
		{Name: "Effect", Type: "string", Description: taintDocs["effect"]},
		{Name: "TimeAdded", Type: "string", Description: taintDocs["timeAdded"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		r := obj.(*resourcev1.DeviceTaintRule)
		added := ""
		if t := r.Spec.Taint.TimeAdded; t != nil {
			added = registry.Age(*t)
		}
		return []any{r.Name, r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, registry.Age(r.CreationTimestamp)}
	},
}

var claimTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		c := obj.(*resourcev1.ResourceClaim)
		return []any{c.Name, claimState(c), registry.Age(c.CreationTimestamp)}
	},
}

// claimState is upstream's printer's summary of a claim.
func claimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	if c.Status.Allocation == nil {
		if c.DeletionTimestamp == nil {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}

var sliceTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Node", Type: "string", Description: resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Driver", Type: "string", Description: resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]},
		{Name: "Pool", Type: "string", Description: resourcev1.ResourcePool{}.SwaggerDoc()["name"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		rs := obj.(*resourcev1.ResourceSlice)
		node := ""
		if rs.Spec.NodeName != nil {
			node = *rs.Spec.NodeName
		}
		return []any{rs.Name, node, rs.Spec.Driver, rs.Spec.Pool.Name, registry.Age(rs.CreationTimestamp)}
	},
}
