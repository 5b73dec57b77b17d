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
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/csinode"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolume"
)

const (
	inlineForbidden = "may not be specified in the context of inline volumes"
	oneVolumeType   = "may not specify more than 1 volume type"
)

// validateInlineSpec is upstream's ValidatePersistentVolumeSpec for an
// inline volume (validateInlinePersistentVolumeSpec, with the zero
// options a volume attachment passes): a CSI volume with access modes,
// and none of what only a PersistentVolume object has. Of the volume
// sources only CSI's fields are checked: any other source is refused
// already, as csi is then missing or a second volume type.
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
	errs = append(errs, validateVolumeSources(spec, p)...)
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

type volumeSource struct {
	// name is the path upstream reports a second volume type at: the JSON
	// name, but for cephfs, reported as cephFS.
	name string
	set  bool
}

// volumeSources lists the volume sources of s in the order upstream
// checks them.
func volumeSources(s *corev1.PersistentVolumeSource) []volumeSource {
	return []volumeSource{
		{"hostPath", s.HostPath != nil}, {"gcePersistentDisk", s.GCEPersistentDisk != nil},
		{"awsElasticBlockStore", s.AWSElasticBlockStore != nil}, {"glusterfs", s.Glusterfs != nil},
		{"flocker", s.Flocker != nil}, {"nfs", s.NFS != nil}, {"rbd", s.RBD != nil}, {"quobyte", s.Quobyte != nil},
		{"cephFS", s.CephFS != nil}, {"iscsi", s.ISCSI != nil}, {"cinder", s.Cinder != nil}, {"fc", s.FC != nil},
		{"flexVolume", s.FlexVolume != nil}, {"azureFile", s.AzureFile != nil}, {"vsphereVolume", s.VsphereVolume != nil},
		{"photonPersistentDisk", s.PhotonPersistentDisk != nil}, {"portworxVolume", s.PortworxVolume != nil},
		{"azureDisk", s.AzureDisk != nil}, {"scaleIO", s.ScaleIO != nil}, {"local", s.Local != nil},
		{"storageos", s.StorageOS != nil}, {"csi", s.CSI != nil},
	}
}

// validateVolumeSources counts the volume sources as upstream does: the
// first is checked, each further one is an error but for flexVolume,
// which upstream counts without refusing. A local volume requires node
// affinity, which an inline volume may not have.
func validateVolumeSources(spec *corev1.PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, s := range volumeSources(&spec.PersistentVolumeSource) {
		if !s.set {
			continue
		}
		if n > 0 && s.name != "flexVolume" {
			errs = append(errs, field.Forbidden(p.Child(s.name), oneVolumeType))
			continue
		}
		n++
		switch s.name {
		case "csi":
			errs = append(errs, validateCSISource(spec.CSI, p.Child("csi"))...)
		case "local":
			errs = append(errs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// validateCSISource is upstream's validateCSIPersistentVolumeSource: a
// driver, a volume handle and well-formed secret references.
func validateCSISource(csi *corev1.CSIPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := csinode.ValidateDriverName(csi.Driver, p.Child("driver"))
	if csi.VolumeHandle == "" {
		errs = append(errs, field.Required(p.Child("volumeHandle"), ""))
	}
	for _, ref := range []struct {
		name string
		ref  *corev1.SecretReference
	}{
		{"controllerPublishSecretRef", csi.ControllerPublishSecretRef},
		{"controllerExpandSecretRef", csi.ControllerExpandSecretRef},
		{"nodePublishSecretRef", csi.NodePublishSecretRef},
		{"nodeExpandSecretRef", csi.NodeExpandSecretRef},
	} {
		if ref.ref != nil {
			errs = append(errs, validateSecretReference(ref.ref, p.Child(ref.name))...)
		}
	}
	return errs
}

// validateSecretReference is upstream's validatePVSecretReference: a
// name that is a DNS subdomain and a namespace that is a DNS label.
func validateSecretReference(ref *corev1.SecretReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	if ref.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(ref.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ref.Namespace, msg))
		}
	}
	return errs
}
