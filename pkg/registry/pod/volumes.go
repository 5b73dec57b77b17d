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

package pod

import (
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
)

// validateVolumes is upstream's ValidateVolumes: it returns the valid
// volumes' sources. Given the pod's name (a template has none), an
// ephemeral volume's claim has a valid name and no volume names it.
func validateVolumes(volumes []corev1.Volume, podName string, p *field.Path) (volumeSources, field.ErrorList) {
	var errs field.ErrorList
	names := volumeSources{}
	created := sets.New[string]()
	for _, v := range volumes {
		if v.Ephemeral != nil && podName != "" {
			created.Insert(podName + "-" + v.Name)
		}
	}
	for i, v := range volumes {
		ip := p.Index(i)
		el := append(validateVolumeSource(&v.VolumeSource, v.Name, podName, ip), volume.Required(v.Name, ip.Child("name"))...)
		el = append(el, dns1123Label(v.Name, ip.Child("name"))...)
		if _, ok := names[v.Name]; ok {
			el = append(el, field.Duplicate(ip.Child("name"), v.Name))
		}
		if len(el) == 0 {
			names[v.Name] = v.VolumeSource
		}
		errs = append(errs, el...)
		if c := v.PersistentVolumeClaim; c != nil && created.Has(c.ClaimName) {
			errs = append(errs, field.Invalid(ip.Child("persistentVolumeClaim", "claimName"), c.ClaimName, "must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return names, errs
}

// volumeKind is a kind of source: its name, its field's path, whether a
// source has it, and its check.
type volumeKind struct {
	name, child string
	set         func(*corev1.VolumeSource) bool
	validate    func(*corev1.VolumeSource, *field.Path) field.ErrorList
}

// kind is the volumeKind of the source get returns.
func kind[T any](name, child string, get func(*corev1.VolumeSource) *T, validate func(*T, *field.Path) field.ErrorList) volumeKind {
	return volumeKind{name, child, func(s *corev1.VolumeSource) bool { return get(s) != nil },
		func(s *corev1.VolumeSource, p *field.Path) field.ErrorList { return validate(get(s), p) }}
}

// volumeKinds are upstream's, in its order and with its paths.
var volumeKinds = []volumeKind{
	kind("emptyDir", "emptyDir", func(s *corev1.VolumeSource) *corev1.EmptyDirVolumeSource { return s.EmptyDir }, validateEmptyDir),
	kind("hostPath", "hostPath", func(s *corev1.VolumeSource) *corev1.HostPathVolumeSource { return s.HostPath }, volume.HostPath),
	kind("gitRepo", "gitRepo", func(s *corev1.VolumeSource) *corev1.GitRepoVolumeSource { return s.GitRepo }, validateGitRepo),
	kind("gcePersistentDisk", "persistentDisk", func(s *corev1.VolumeSource) *corev1.GCEPersistentDiskVolumeSource { return s.GCEPersistentDisk }, volume.GCEPersistentDisk),
	kind("awsElasticBlockStore", "awsElasticBlockStore", func(s *corev1.VolumeSource) *corev1.AWSElasticBlockStoreVolumeSource { return s.AWSElasticBlockStore }, volume.AWSElasticBlockStore),
	kind("secret", "secret", func(s *corev1.VolumeSource) *corev1.SecretVolumeSource { return s.Secret }, validateSecretVolume),
	kind("nfs", "nfs", func(s *corev1.VolumeSource) *corev1.NFSVolumeSource { return s.NFS }, volume.NFS),
	kind("iscsi", "iscsi", func(s *corev1.VolumeSource) *corev1.ISCSIVolumeSource { return s.ISCSI }, validateISCSI),
	kind("glusterfs", "glusterfs", func(s *corev1.VolumeSource) *corev1.GlusterfsVolumeSource { return s.Glusterfs }, validateGlusterfs),
	kind("flocker", "flocker", func(s *corev1.VolumeSource) *corev1.FlockerVolumeSource { return s.Flocker }, volume.Flocker),
	kind("persistentVolumeClaim", "persistentVolumeClaim", func(s *corev1.VolumeSource) *corev1.PersistentVolumeClaimVolumeSource { return s.PersistentVolumeClaim }, volume.RequiredField("claimName", func(c *corev1.PersistentVolumeClaimVolumeSource) bool { return c.ClaimName == "" })),
	kind("rbd", "rbd", func(s *corev1.VolumeSource) *corev1.RBDVolumeSource { return s.RBD }, validateRBD),
	kind("cinder", "cinder", func(s *corev1.VolumeSource) *corev1.CinderVolumeSource { return s.Cinder }, validateCinder),
	kind("cephFS", "cephfs", func(s *corev1.VolumeSource) *corev1.CephFSVolumeSource { return s.CephFS }, volume.RequiredField("monitors", func(c *corev1.CephFSVolumeSource) bool { return len(c.Monitors) == 0 })),
	kind("quobyte", "quobyte", func(s *corev1.VolumeSource) *corev1.QuobyteVolumeSource { return s.Quobyte }, volume.Quobyte),
	kind("downwarAPI", "downwardAPI", func(s *corev1.VolumeSource) *corev1.DownwardAPIVolumeSource { return s.DownwardAPI }, validateDownwardAPIVolume),
	kind("fc", "fc", func(s *corev1.VolumeSource) *corev1.FCVolumeSource { return s.FC }, volume.FC),
	kind("flexVolume", "flexVolume", func(s *corev1.VolumeSource) *corev1.FlexVolumeSource { return s.FlexVolume }, validateFlexVolume),
	kind("configMap", "configMap", func(s *corev1.VolumeSource) *corev1.ConfigMapVolumeSource { return s.ConfigMap }, validateConfigMapVolume),
	kind("azureFile", "azureFile", func(s *corev1.VolumeSource) *corev1.AzureFileVolumeSource { return s.AzureFile }, validateAzureFile),
	kind("vsphereVolume", "vsphereVolume", func(s *corev1.VolumeSource) *corev1.VsphereVirtualDiskVolumeSource { return s.VsphereVolume }, volume.Vsphere),
	kind("photonPersistentDisk", "photonPersistentDisk", func(s *corev1.VolumeSource) *corev1.PhotonPersistentDiskVolumeSource { return s.PhotonPersistentDisk }, volume.Photon),
	kind("portworxVolume", "portworxVolume", func(s *corev1.VolumeSource) *corev1.PortworxVolumeSource { return s.PortworxVolume }, volume.Portworx),
	kind("azureDisk", "azureDisk", func(s *corev1.VolumeSource) *corev1.AzureDiskVolumeSource { return s.AzureDisk }, volume.AzureDisk),
	kind("storageos", "storageos", func(s *corev1.VolumeSource) *corev1.StorageOSVolumeSource { return s.StorageOS }, validateStorageOS),
	kind("projected", "projected", func(s *corev1.VolumeSource) *corev1.ProjectedVolumeSource { return s.Projected }, validateProjected),
	kind("scaleIO", "scaleIO", func(s *corev1.VolumeSource) *corev1.ScaleIOVolumeSource { return s.ScaleIO }, validateScaleIO),
	kind("csi", "csi", func(s *corev1.VolumeSource) *corev1.CSIVolumeSource { return s.CSI }, validateCSIVolume),
	kind("ephemeral", "ephemeral", func(s *corev1.VolumeSource) *corev1.EphemeralVolumeSource { return s.Ephemeral }, validateEphemeralVolume),
	kind("image", "image", func(s *corev1.VolumeSource) *corev1.ImageVolumeSource { return s.Image }, validateImageVolume),
}

// validateVolumeSource is upstream's: one source, valid (a second is not
// checked), an ephemeral one's claim named validly; and, even for a second,
// a short iSCSI name with an initiator.
func validateVolumeSource(s *corev1.VolumeSource, volName, podName string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, t := range volumeKinds {
		switch {
		case !t.set(s):
		case n > 0:
			errs = append(errs, field.Forbidden(p.Child(t.name), "may not specify more than 1 volume type"))
		default:
			n++
			errs = append(errs, t.validate(s, p.Child(t.child))...)
			if t.name == "ephemeral" && podName != "" && volName != "" {
				claim := podName + "-" + volName
				for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(claim, false) {
					errs = append(errs, field.Invalid(p.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", claim, msg)))
				}
			}
		}
		if iscsi := s.ISCSI; t.name == "iscsi" && iscsi != nil && iscsi.InitiatorName != nil && len(volName+":"+iscsi.TargetPortal) > 64 {
			errs = append(errs, field.Invalid(p.Child("name"), volName,
				"Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

// validateEmptyDir is upstream's check of an emptyDir's size and mode.
func validateEmptyDir(e *corev1.EmptyDirVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.SizeLimit != nil && e.SizeLimit.Sign() < 0 {
		errs = append(errs, field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
	}
	if e.Mode != nil && (*e.Mode > 0o1777 || *e.Mode < 0) {
		errs = append(errs, field.Invalid(p.Child("mode"), *e.Mode, "must be a number between 0 and 01777 (octal), both inclusive"))
	}
	return errs
}

// validateLocalNonReservedPath is upstream's ValidateLocalNonReservedPath:
// a relative path without backsteps, not starting with "..".
func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	errs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, field.Invalid(p, target, "must not start with '..'"))
	}
	return errs
}

// validateLocalDescendingPath is upstream's: relative, without backsteps.
func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(target) {
		errs = append(errs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(errs, volume.PathNoBacksteps(target, p)...)
}

// validateFileMode is upstream's check of a file's mode: 0 to 0777.
func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0o777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, "must be a number between 0 and 0777 (octal), both inclusive")}
	}
	return nil
}

// validateUserField is upstream's: a valid user ID, if any.
func validateUserField(user *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if user != nil {
		for _, msg := range validation.IsValidUserID(*user) {
			errs = append(errs, field.Invalid(p, *user, msg))
		}
	}
	return errs
}

// Upstream's mount propagations, recursive read-only modes, bind options.
var (
	mountPropagations      = []corev1.MountPropagationMode{corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone}
	recursiveReadOnlyModes = []corev1.RecursiveReadOnlyMode{corev1.RecursiveReadOnlyDisabled, corev1.RecursiveReadOnlyEnabled, corev1.RecursiveReadOnlyIfPossible}
	bindMountOptions       = []string{string(corev1.BindMountOptionNoDev), string(corev1.BindMountOptionNoExec), string(corev1.BindMountOptionNoSUID)}
)

// validateMountRecursiveReadOnly is upstream's.
func validateMountRecursiveReadOnly(m corev1.VolumeMount, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch rro := m.RecursiveReadOnly; {
	case rro == nil || *rro == corev1.RecursiveReadOnlyDisabled:
	case *rro == corev1.RecursiveReadOnlyEnabled || *rro == corev1.RecursiveReadOnlyIfPossible:
		if !m.ReadOnly {
			errs = append(errs, field.Forbidden(p, "may only be specified when readOnly is true"))
		}
		if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
			errs = append(errs, field.Forbidden(p, "may only be specified when mountPropagation is None or not specified"))
		}
	default:
		errs = append(errs, field.NotSupported(p, *rro, recursiveReadOnlyModes))
	}
	return errs
}

// validateBindMountOptions is upstream's: known options, each once.
func validateBindMountOptions(options []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, o := range options {
		if !slices.Contains(bindMountOptions, o) {
			errs = append(errs, field.NotSupported(p.Index(i), o, bindMountOptions))
		}
		if seen.Has(o) {
			errs = append(errs, field.Duplicate(p.Index(i), o))
		}
		seen.Insert(o)
	}
	return errs
}
