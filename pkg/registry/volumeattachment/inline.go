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
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolume"
)

const inlineForbidden = "may not be specified in the context of inline volumes"

// validateInlineSpec is upstream's ValidatePersistentVolumeSpec for an
// inline volume (validateInlinePersistentVolumeSpec, with the zero
// options a volume attachment passes): a CSI volume with access modes,
// and none of what only a PersistentVolume object has; its source checked
// as a volume's.
func validateInlineSpec(spec *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.ClaimRef != nil {
		errs = append(errs, field.Forbidden(p.Child("claimRef"), inlineForbidden))
	}
	if len(spec.Capacity) != 0 {
		errs = append(errs, field.Forbidden(p.Child("capacity"), inlineForbidden))
	}
	if spec.CSI == nil {
		errs = append(errs, field.Required(p.Child("csi"), "has to be specified in the context of inline volumes"))
	}
	errs = append(errs, persistentvolume.ValidateAccessModes(spec.AccessModes, p.Child("accessModes"), "")...)
	if r := spec.PersistentVolumeReclaimPolicy; r != "" && r != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may only be "+string(corev1.PersistentVolumeReclaimRetain)+" in the context of inline volumes"))
	}
	if spec.NodeAffinity != nil {
		errs = append(errs, field.Forbidden(p.Child("nodeAffinity"), inlineForbidden))
	}
	errs = append(errs, persistentvolume.ValidateSource(spec, "", true, p)...)
	if spec.HostPath != nil && path.Clean(spec.HostPath.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if spec.StorageClassName != "" {
		errs = append(errs, field.Forbidden(p.Child("storageClassName"), inlineForbidden))
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.Forbidden(p.Child("volumeMode"), "may not specify volumeMode other than "+string(corev1.PersistentVolumeFilesystem)+" in the context of inline volumes"))
	}
	return errs
}
