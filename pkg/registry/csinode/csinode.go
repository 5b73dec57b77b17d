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

package csinode

import (
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "storage.k8s.io/v1"

// NewStorage returns the storage of csinodes and csinodes/status. Names
// are DNS subdomains (the strategy's default), as upstream's
// ValidateNodeName.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main, status := strategies()
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: storagev1.Resource("csinodes"),
		Singular: "csinode",
		New:      func() runtime.Object { return &storagev1.CSINode{} },
		NewList:  func() runtime.Object { return &storagev1.CSINodeList{} },
		Strategy: main,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"csinodes":        store,
		"csinodes/status": registry.NewStatusREST(store, status),
	}, nil
}

// strategies returns the strategies of csinodes and of their status. As
// upstream's, which count no generation: a create clears status, an
// update keeps it; a status update keeps spec and the metadata a status
// write may not change, and drops status.storageHealth unless the stored
// object has some, since CSIVolumeHealth is off by default in 1.37.
func strategies() (main, status registry.Strategy) {
	base := registry.NewStrategy(false)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateDrivers(obj.(*storagev1.CSINode).Spec.Drivers)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		drivers, oldDrivers := obj.(*storagev1.CSINode).Spec.Drivers, old.(*storagev1.CSINode).Spec.Drivers
		return append(validateDrivers(drivers), validateDriversUpdate(drivers, oldDrivers)...)
	}
	main, status = registry.SpecAndStatus{GroupVersion: groupVersion, StatusKeepsMetadata: true}.Strategies(base)
	keepSpec := status.OnUpdate
	status.OnUpdate = func(obj, old runtime.Object) {
		keepSpec(obj, old)
		n, oldN := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
		if len(oldN.Status.StorageHealth) == 0 {
			n.Status.StorageHealth = nil
		}
	}
	// Upstream's ValidateCSINodeStatusUpdate checks the status alone: the
	// spec is the stored one.
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateStatus(&obj.(*storagev1.CSINode).Status)
	}
	status.ResetFields = registry.Fieldpaths(groupVersion, "metadata", "spec")
	return main, status
}

// table is upstream's printCSINode: NAME, DRIVERS (how many), AGE.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		n := obj.(*storagev1.CSINode)
		return []any{n.Name, int64(len(n.Spec.Drivers)), registry.Age(n.CreationTimestamp)}
	},
}

// maxNodeIDLength is upstream's csiNodeIDMaxLength.
const maxNodeIDLength = 256

var driversPath = field.NewPath("spec", "drivers")

// validateDrivers is upstream's validateCSINodeDrivers. Its topology key
// errors name the driver, not the key, as upstream's do.
func validateDrivers(drivers []storagev1.CSINodeDriver) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, d := range drivers {
		p := driversPath.Index(i)
		errs = append(errs, volume.CSIDriverName(d.Name, p.Child("name"))...)
		if d.NodeID == "" {
			errs = append(errs, field.Required(p.Child("nodeID"), ""))
		}
		if len(d.NodeID) > maxNodeIDLength {
			errs = append(errs, field.Invalid(p.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", maxNodeIDLength)))
		}
		if a := d.Allocatable; a != nil && a.Count != nil {
			errs = append(errs, apimachineryvalidation.ValidateNonnegativeField(int64(*a.Count), p.Child("allocatable", "count"))...)
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		keys := sets.New[string]()
		for _, key := range d.TopologyKeys {
			if key == "" {
				errs = append(errs, field.Required(p, ""))
			}
			if keys.Has(key) {
				errs = append(errs, field.Duplicate(p, key))
			}
			keys.Insert(key)
			for _, msg := range validation.IsQualifiedName(key) {
				errs = append(errs, field.Invalid(p, key, msg))
			}
		}
	}
	return errs
}

// internalDriver is a driver as upstream's internal CSINodeDriver prints
// in an error (it has no JSON tags): {"Name":...,"Allocatable":null}.
type internalDriver struct {
	Name         string
	NodeID       string
	TopologyKeys []string
	Allocatable  *struct{ Count *int32 }
}

// validateDriversUpdate is upstream's ValidateCSINodeUpdate beyond the
// create rules: a driver kept by name may not change, except its
// allocatable count (MutableCSINodeAllocatableCount is GA in 1.37). As
// upstream's, the error is on spec.drivers and carries the new driver
// without allocatable.
func validateDriversUpdate(drivers, old []storagev1.CSINodeDriver) field.ErrorList {
	var errs field.ErrorList
	for _, o := range old {
		for _, d := range drivers {
			if o.Name != d.Name {
				continue
			}
			now := &internalDriver{Name: d.Name, NodeID: d.NodeID, TopologyKeys: d.TopologyKeys}
			was := &internalDriver{Name: o.Name, NodeID: o.NodeID, TopologyKeys: o.TopologyKeys}
			errs = append(errs, apimachineryvalidation.ValidateImmutableField(now, was, driversPath)...)
		}
	}
	return errs
}
