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

package persistentvolume

import (
	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
)

// source is a kind of volume source: its name (where a second one is
// refused), its field's path, whether a volume has it, and its check.
type source struct {
	name, child string
	set         func(*corev1.PersistentVolumeSource) bool
	validate    func(spec, *field.Path) field.ErrorList
}

// spec is a volume's spec as a source's check sees it.
type spec struct {
	*corev1.PersistentVolumeSpec
	// name is the volume's ("" for an inline volume).
	name string
	// inline: an inline volume's node affinity does not count.
	inline bool
	// path is the spec's.
	path *field.Path
}

// kind is the source get returns, checked by validate.
func kind[T any](name, child string, get func(*corev1.PersistentVolumeSource) *T, validate func(*T, *field.Path) field.ErrorList) source {
	return source{name, child, func(s *corev1.PersistentVolumeSource) bool { return get(s) != nil },
		func(s spec, p *field.Path) field.ErrorList { return validate(get(&s.PersistentVolumeSource), p) }}
}

// sources are upstream's, in its order and with its paths (a GCE disk's
// errors at spec.persistentDisk, a CephFS one's at spec.cephfs).
var sources = []source{
	kind("hostPath", "hostPath", func(s *corev1.PersistentVolumeSource) *corev1.HostPathVolumeSource { return s.HostPath }, volume.HostPath),
	kind("gcePersistentDisk", "persistentDisk", func(s *corev1.PersistentVolumeSource) *corev1.GCEPersistentDiskVolumeSource {
		return s.GCEPersistentDisk
	}, volume.GCEPersistentDisk),
	kind("awsElasticBlockStore", "awsElasticBlockStore", func(s *corev1.PersistentVolumeSource) *corev1.AWSElasticBlockStoreVolumeSource {
		return s.AWSElasticBlockStore
	}, volume.AWSElasticBlockStore),
	kind("glusterfs", "glusterfs", func(s *corev1.PersistentVolumeSource) *corev1.GlusterfsPersistentVolumeSource { return s.Glusterfs }, validateGlusterfs),
	kind("flocker", "flocker", func(s *corev1.PersistentVolumeSource) *corev1.FlockerVolumeSource { return s.Flocker }, volume.Flocker),
	kind("nfs", "nfs", func(s *corev1.PersistentVolumeSource) *corev1.NFSVolumeSource { return s.NFS }, volume.NFS),
	kind("rbd", "rbd", func(s *corev1.PersistentVolumeSource) *corev1.RBDPersistentVolumeSource { return s.RBD }, func(rbd *corev1.RBDPersistentVolumeSource, p *field.Path) field.ErrorList {
		return append(volume.RequiredList(len(rbd.CephMonitors), p.Child("monitors")), volume.Required(rbd.RBDImage, p.Child("image"))...)
	}),
	kind("quobyte", "quobyte", func(s *corev1.PersistentVolumeSource) *corev1.QuobyteVolumeSource { return s.Quobyte }, volume.Quobyte),
	kind("cephFS", "cephfs", func(s *corev1.PersistentVolumeSource) *corev1.CephFSPersistentVolumeSource { return s.CephFS }, func(c *corev1.CephFSPersistentVolumeSource, p *field.Path) field.ErrorList {
		return volume.RequiredList(len(c.Monitors), p.Child("monitors"))
	}),
	{"iscsi", "iscsi", func(s *corev1.PersistentVolumeSource) bool { return s.ISCSI != nil }, validateISCSI},
	kind("cinder", "cinder", func(s *corev1.PersistentVolumeSource) *corev1.CinderPersistentVolumeSource { return s.Cinder }, func(c *corev1.CinderPersistentVolumeSource, p *field.Path) field.ErrorList {
		errs := volume.Required(c.VolumeID, p.Child("volumeID"))
		if c.SecretRef != nil {
			errs = append(errs, secretNameAndNamespace(c.SecretRef.Name, c.SecretRef.Namespace, p.Child("secretRef"))...)
		}
		return errs
	}),
	kind("fc", "fc", func(s *corev1.PersistentVolumeSource) *corev1.FCVolumeSource { return s.FC }, volume.FC),
	kind("flexVolume", "flexVolume", func(s *corev1.PersistentVolumeSource) *corev1.FlexPersistentVolumeSource { return s.FlexVolume }, func(f *corev1.FlexPersistentVolumeSource, p *field.Path) field.ErrorList {
		return append(volume.Required(f.Driver, p.Child("driver")), volume.FlexOptions(f.Options, p.Child("options"))...)
	}),
	kind("azureFile", "azureFile", func(s *corev1.PersistentVolumeSource) *corev1.AzureFilePersistentVolumeSource { return s.AzureFile }, func(a *corev1.AzureFilePersistentVolumeSource, p *field.Path) field.ErrorList {
		errs := append(volume.Required(a.SecretName, p.Child("secretName")), volume.Required(a.ShareName, p.Child("shareName"))...)
		if a.SecretNamespace != nil {
			errs = append(errs, volume.Required(*a.SecretNamespace, p.Child("secretNamespace"))...)
		}
		return errs
	}),
	kind("vsphereVolume", "vsphereVolume", func(s *corev1.PersistentVolumeSource) *corev1.VsphereVirtualDiskVolumeSource { return s.VsphereVolume }, volume.Vsphere),
	kind("photonPersistentDisk", "photonPersistentDisk", func(s *corev1.PersistentVolumeSource) *corev1.PhotonPersistentDiskVolumeSource {
		return s.PhotonPersistentDisk
	}, volume.Photon),
	kind("portworxVolume", "portworxVolume", func(s *corev1.PersistentVolumeSource) *corev1.PortworxVolumeSource { return s.PortworxVolume }, volume.Portworx),
	kind("azureDisk", "azureDisk", func(s *corev1.PersistentVolumeSource) *corev1.AzureDiskVolumeSource { return s.AzureDisk }, volume.AzureDisk),
	kind("scaleIO", "scaleIO", func(s *corev1.PersistentVolumeSource) *corev1.ScaleIOPersistentVolumeSource { return s.ScaleIO }, func(s *corev1.ScaleIOPersistentVolumeSource, p *field.Path) field.ErrorList {
		errs := append(volume.Required(s.Gateway, p.Child("gateway")), volume.Required(s.System, p.Child("system"))...)
		return append(errs, volume.Required(s.VolumeName, p.Child("volumeName"))...)
	}),
	{"local", "local", func(s *corev1.PersistentVolumeSource) bool { return s.Local != nil }, validateLocal},
	kind("storageos", "storageos", func(s *corev1.PersistentVolumeSource) *corev1.StorageOSPersistentVolumeSource { return s.StorageOS }, validateStorageOS),
	kind("csi", "csi", func(s *corev1.PersistentVolumeSource) *corev1.CSIPersistentVolumeSource { return s.CSI }, validateCSI),
}

// ValidateSource is upstream's check of a volume's sources (in
// ValidatePersistentVolumeSpec): one source, valid (a second is not
// checked). name is the volume's, "" for an inline volume (a volume
// attachment's). As upstream's, a flex volume is counted but never
// refused as a second source.
func ValidateSource(pv *corev1.PersistentVolumeSpec, name string, inline bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, s := range sources {
		switch {
		case !s.set(&pv.PersistentVolumeSource):
		case n > 0 && s.name != "flexVolume":
			errs = append(errs, field.Forbidden(p.Child(s.name), "may not specify more than 1 volume type"))
		default:
			n++
			errs = append(errs, s.validate(spec{pv, name, inline, p}, p.Child(s.child))...)
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// validateGlusterfs is upstream's validateGlusterfsPersistentVolumeSource.
func validateGlusterfs(g *corev1.GlusterfsPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := append(volume.Required(g.EndpointsName, p.Child("endpoints")), volume.Required(g.Path, p.Child("path"))...)
	if ns := g.EndpointsNamespace; ns != nil && *ns == "" {
		errs = append(errs, field.Invalid(p.Child("endpointsNamespace"), *ns, "if the endpointnamespace is set, it must be a valid namespace name"))
	} else if ns != nil {
		for _, msg := range apimachineryvalidation.ValidateNamespaceName(*ns, false) {
			errs = append(errs, field.Invalid(p.Child("endpointsNamespace"), *ns, msg))
		}
	}
	return errs
}

// validateISCSI is upstream's validateISCSIPersistentVolumeSource, which
// needs the volume's name.
func validateISCSI(s spec, p *field.Path) field.ErrorList {
	iscsi := s.ISCSI
	errs := volume.Required(iscsi.TargetPortal, p.Child("targetPortal"))
	if iscsi.InitiatorName != nil && len(s.name+":"+iscsi.TargetPortal) > 64 {
		errs = append(errs, field.Invalid(p.Child("targetportal"), iscsi.TargetPortal,
			"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if iscsi.IQN == "" {
		errs = append(errs, field.Required(p.Child("iqn"), ""))
	} else {
		errs = append(errs, volume.ISCSIName(iscsi.IQN, "must be valid format", p.Child("iqn"))...)
	}
	if iscsi.Lun < 0 || iscsi.Lun > 255 {
		errs = append(errs, field.Invalid(p.Child("lun"), iscsi.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (iscsi.DiscoveryCHAPAuth || iscsi.SessionCHAPAuth) && iscsi.SecretRef == nil {
		errs = append(errs, field.Required(p.Child("secretRef"), ""))
	}
	if iscsi.SecretRef != nil {
		errs = append(errs, volume.Required(iscsi.SecretRef.Name, p.Child("secretRef", "name"))...)
	}
	if iscsi.InitiatorName != nil {
		errs = append(errs, volume.ISCSIName(*iscsi.InitiatorName, "must be valid format", p.Child("initiatorname"))...)
	}
	return errs
}

// validateLocal is upstream's validateLocalVolumeSource, and its rule
// that a local volume has a node affinity (which an inline one may not).
func validateLocal(s spec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path := s.Local.Path; path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	} else {
		errs = append(errs, volume.PathNoBacksteps(path, p.Child("path"))...)
	}
	if s.NodeAffinity == nil || s.inline {
		errs = append(errs, field.Required(s.path.Child("nodeAffinity"), "Local volume requires node affinity"))
	}
	return errs
}

// validateStorageOS is upstream's validateStorageOSPersistentVolumeSource.
func validateStorageOS(s *corev1.StorageOSPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := volume.Required(s.VolumeName, p.Child("volumeName"))
	if s.VolumeName != "" {
		errs = append(errs, dns1123Label(s.VolumeName, p.Child("volumeName"))...)
	}
	if s.VolumeNamespace != "" {
		errs = append(errs, dns1123Label(s.VolumeNamespace, p.Child("volumeNamespace"))...)
	}
	if s.SecretRef != nil {
		errs = append(errs, secretNameAndNamespace(s.SecretRef.Name, s.SecretRef.Namespace, p.Child("secretRef"))...)
	}
	return errs
}

// validateCSI is upstream's validateCSIPersistentVolumeSource.
func validateCSI(csi *corev1.CSIPersistentVolumeSource, p *field.Path) field.ErrorList {
	errs := append(volume.CSIDriverName(csi.Driver, p.Child("driver")), volume.Required(csi.VolumeHandle, p.Child("volumeHandle"))...)
	for _, ref := range []struct {
		name string
		ref  *corev1.SecretReference
	}{{"controllerPublishSecretRef", csi.ControllerPublishSecretRef}, {"controllerExpandSecretRef", csi.ControllerExpandSecretRef},
		{"nodePublishSecretRef", csi.NodePublishSecretRef}, {"nodeExpandSecretRef", csi.NodeExpandSecretRef}} {
		if ref.ref != nil {
			errs = append(errs, validateSecretReference(ref.ref, p.Child(ref.name))...)
		}
	}
	return errs
}

// validateSecretReference is upstream's validatePVSecretReference.
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
		return append(errs, field.Required(p.Child("namespace"), ""))
	}
	return append(errs, dns1123Label(ref.Namespace, p.Child("namespace"))...)
}

// secretNameAndNamespace is upstream's check of a Cinder or StorageOS
// volume's secret reference: a name and a namespace, in any form.
func secretNameAndNamespace(name, namespace string, p *field.Path) field.ErrorList {
	return append(volume.Required(name, p.Child("name")), volume.Required(namespace, p.Child("namespace"))...)
}

// dns1123Label is upstream's ValidateDNS1123Label.
func dns1123Label(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}
