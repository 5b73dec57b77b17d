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

package volumeattachment

import (
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "storage.k8s.io/v1"

// NewStorage returns the storage of volumeattachments and
// volumeattachments/status. Names are DNS subdomains (the strategy's
// default), as upstream's ValidateClassName.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main, status := strategies()
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: storagev1.Resource("volumeattachments"),
		Singular: "volumeattachment",
		New:      func() runtime.Object { return &storagev1.VolumeAttachment{} },
		NewList:  func() runtime.Object { return &storagev1.VolumeAttachmentList{} },
		Strategy: main,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"volumeattachments":        store,
		"volumeattachments/status": registry.NewStatusREST(store, status),
	}, nil
}

// strategies returns the strategies of volumeattachments and of their
// status. As upstream's, which count no generation (the spec never
// changes): a create clears status, an update keeps it; a status update
// keeps spec and the metadata a status write may not change, and keeps
// the errors' codes (MutableCSINodeAllocatableCount is GA in 1.37).
func strategies() (main, status registry.Strategy) {
	base := registry.NewStrategy(false)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateAttachment(obj.(*storagev1.VolumeAttachment), nil)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateAttachment(obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment))
	}
	main, status = registry.SpecAndStatus{GroupVersion: groupVersion, StatusKeepsMetadata: true}.Strategies(base)
	// Upstream's status strategy validates as its main one does, the whole
	// object, spec included (the stored one, so never changed).
	status.ValidateFieldsUpdate = base.ValidateFieldsUpdate
	status.ResetFields = registry.Fieldpaths(groupVersion, "metadata", "spec")
	return main, status
}

// table is upstream's printVolumeAttachment: NAME, ATTACHER, PV (the
// persistent volume's name, "" for an inline volume), NODE, ATTACHED, AGE.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
		{Name: "PV", Type: "string", Description: storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]},
		{Name: "Node", Type: "string", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]},
		{Name: "Attached", Type: "boolean", Description: storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		va := obj.(*storagev1.VolumeAttachment)
		pv := ""
		if va.Spec.Source.PersistentVolumeName != nil {
			pv = *va.Spec.Source.PersistentVolumeName
		}
		return []any{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, registry.Age(va.CreationTimestamp)}
	},
}
