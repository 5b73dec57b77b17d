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
	"reflect"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
)

// validateGitRepo is upstream's validateGitRepoVolumeSource.
func validateGitRepo(g *corev1.GitRepoVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.Required(g.Repository, p.Child("repository")), validateLocalDescendingPath(g.Directory, p.Child("directory"))...)
}

// validateSecretVolume is upstream's validateSecretVolumeSource.
func validateSecretVolume(s *corev1.SecretVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.Required(s.SecretName, p.Child("secretName")), validateKeyFiles(s.DefaultMode, s.DefaultUser, s.Items, p)...)
}

// validateKeyFiles is upstream's check of a secret's or config map's files.
func validateKeyFiles(mode *int32, user *int64, items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	errs := append(validateFileMode(mode, p.Child("defaultMode")), validateUserField(user, p.Child("defaultUser"))...)
	for i := range items {
		errs = append(errs, validateKeyToPath(&items[i], p.Child("items").Index(i))...)
	}
	return errs
}

// validateKeyToPath is upstream's: a key, a local path, a mode and a user.
func validateKeyToPath(kp *corev1.KeyToPath, p *field.Path) field.ErrorList {
	errs := append(volume.Required(kp.Key, p.Child("key")), volume.Required(kp.Path, p.Child("path"))...)
	errs = append(errs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	errs = append(errs, validateFileMode(kp.Mode, p.Child("mode"))...)
	return append(errs, validateUserField(kp.User, p.Child("user"))...)
}

// unknownISCSIName is pods' message for an iSCSI name of no known format.
const unknownISCSIName = "must be valid format starting with iqn, eui, or naa"

// validateISCSI is upstream's validateISCSIVolumeSource.
func validateISCSI(iscsi *corev1.ISCSIVolumeSource, p *field.Path) field.ErrorList {
	errs := volume.Required(iscsi.TargetPortal, p.Child("targetPortal"))
	errs = append(errs, volume.Required(iscsi.IQN, p.Child("iqn"))...)
	if iscsi.IQN != "" {
		errs = append(errs, volume.ISCSIName(iscsi.IQN, unknownISCSIName, p.Child("iqn"))...)
	}
	if iscsi.Lun < 0 || iscsi.Lun > 255 {
		errs = append(errs, field.Invalid(p.Child("lun"), iscsi.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (iscsi.DiscoveryCHAPAuth || iscsi.SessionCHAPAuth) && iscsi.SecretRef == nil {
		errs = append(errs, field.Required(p.Child("secretRef"), ""))
	}
	if iscsi.InitiatorName != nil {
		errs = append(errs, volume.ISCSIName(*iscsi.InitiatorName, unknownISCSIName, p.Child("initiatorname"))...)
	}
	return errs
}

// validateGlusterfs is upstream's validateGlusterfsVolumeSource.
func validateGlusterfs(g *corev1.GlusterfsVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.Required(g.EndpointsName, p.Child("endpoints")), volume.Required(g.Path, p.Child("path"))...)
}

// validateRBD is upstream's validateRBDVolumeSource.
func validateRBD(rbd *corev1.RBDVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.RequiredList(len(rbd.CephMonitors), p.Child("monitors")), volume.Required(rbd.RBDImage, p.Child("image"))...)
}

// validateCinder is upstream's validateCinderVolumeSource.
func validateCinder(c *corev1.CinderVolumeSource, p *field.Path) field.ErrorList {
	errs := volume.Required(c.VolumeID, p.Child("volumeID"))
	if c.SecretRef != nil {
		errs = append(errs, volume.Required(c.SecretRef.Name, p.Child("secretRef", "name"))...)
	}
	return errs
}

// volumeFieldPaths are the pod fields a downward API volume may project.
var volumeFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid")

// validateDownwardAPIVolume is upstream's validateDownwardAPIVolumeSource:
// a default mode and user, and its files (their errors at p, not at
// items[i], as upstream's).
func validateDownwardAPIVolume(d *corev1.DownwardAPIVolumeSource, p *field.Path) field.ErrorList {
	errs := append(validateFileMode(d.DefaultMode, p.Child("defaultMode")), validateUserField(d.DefaultUser, p.Child("defaultUser"))...)
	for i := range d.Items {
		errs = append(errs, validateDownwardAPIFile(&d.Items[i], p)...)
	}
	return errs
}

// validateDownwardAPIFile is upstream's validateDownwardAPIVolumeFile.
func validateDownwardAPIFile(file *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	errs := append(volume.Required(file.Path, p.Child("path")), validateLocalNonReservedPath(file.Path, p.Child("path"))...)
	switch {
	case file.FieldRef != nil:
		errs = append(errs, validateObjectFieldSelector(file.FieldRef, volumeFieldPaths, p.Child("fieldRef"))...)
		if file.ResourceFieldRef != nil {
			errs = append(errs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case file.ResourceFieldRef != nil:
		errs = append(errs, validateResourceFieldSelector(file.ResourceFieldRef, true, p.Child("resourceFieldRef"))...)
	default:
		errs = append(errs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	errs = append(errs, validateFileMode(file.Mode, p.Child("mode"))...)
	return append(errs, validateUserField(file.User, p.Child("user"))...)
}

// validateFlexVolume is upstream's validateFlexVolumeSource.
func validateFlexVolume(f *corev1.FlexVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.Required(f.Driver, p.Child("driver")), volume.FlexOptions(f.Options, p.Child("options"))...)
}

// validateConfigMapVolume is upstream's validateConfigMapVolumeSource.
func validateConfigMapVolume(c *corev1.ConfigMapVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.Required(c.Name, p.Child("name")), validateKeyFiles(c.DefaultMode, c.DefaultUser, c.Items, p)...)
}

// validateAzureFile is upstream's.
func validateAzureFile(a *corev1.AzureFileVolumeSource, p *field.Path) field.ErrorList {
	return append(volume.Required(a.SecretName, p.Child("secretName")), volume.Required(a.ShareName, p.Child("shareName"))...)
}

// validateStorageOS is upstream's validateStorageOSVolumeSource.
func validateStorageOS(s *corev1.StorageOSVolumeSource, p *field.Path) field.ErrorList {
	errs := append(volume.Required(s.VolumeName, p.Child("volumeName")), dns1123Label(s.VolumeName, p.Child("volumeName"))...)
	errs = append(errs, dns1123Label(s.VolumeNamespace, p.Child("volumeNamespace"))...)
	if s.SecretRef != nil {
		errs = append(errs, volume.Required(s.SecretRef.Name, p.Child("secretRef", "name"))...)
	}
	return errs
}

// validateScaleIO is upstream's validateScaleIOVolumeSource.
func validateScaleIO(s *corev1.ScaleIOVolumeSource, p *field.Path) field.ErrorList {
	errs := append(volume.Required(s.Gateway, p.Child("gateway")), volume.Required(s.System, p.Child("system"))...)
	return append(errs, volume.Required(s.VolumeName, p.Child("volumeName"))...)
}

// validateCSIVolume is upstream's validateCSIVolumeSource (with
// ValidateCSIDriverName); a secret's name's errors at csi.name, as upstream's.
func validateCSIVolume(c *corev1.CSIVolumeSource, p *field.Path) field.ErrorList {
	errs := volume.CSIDriverName(c.Driver, p.Child("driver"))
	if ref := c.NodePublishSecretRef; ref != nil && ref.Name == "" {
		errs = append(errs, field.Required(p.Child("nodePublishSecretRef", "name"), ""))
	} else if ref != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(ref.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
		}
	}
	return errs
}

// validateEphemeralVolume is upstream's validateEphemeralVolumeSource and
// ValidatePersistentVolumeClaimTemplate (with ValidateTemplateObjectMeta).
func validateEphemeralVolume(e *corev1.EphemeralVolumeSource, p *field.Path) field.ErrorList {
	tp := p.Child("volumeClaimTemplate")
	if e.VolumeClaimTemplate == nil {
		return field.ErrorList{field.Required(tp, "")}
	}
	meta := &e.VolumeClaimTemplate.ObjectMeta
	errs := apimachineryvalidation.ValidateAnnotations(meta.Annotations, tp.Child("metadata", "annotations"))
	errs = append(errs, metav1validation.ValidateLabels(meta.Labels, tp.Child("metadata", "labels"))...)
	t, v := reflect.TypeFor[metav1.ObjectMeta](), reflect.ValueOf(*meta)
	for i := range t.NumField() {
		if f := t.Field(i); f.Name != "Annotations" && f.Name != "Labels" && !v.Field(i).IsZero() {
			r, n := utf8.DecodeRuneInString(f.Name)
			errs = append(errs, field.Forbidden(tp.Child("metadata", string(unicode.ToLower(r))+f.Name[n:]), "cannot be set"))
		}
	}
	return append(errs, persistentvolumeclaim.ValidateSpec(&e.VolumeClaimTemplate.Spec, tp.Child("spec"))...)
}

// validateImageVolume is upstream's validateImageVolumeSource (which lets
// a pod that had no reference keep it, and sees defaulted pull policies).
func validateImageVolume(image *corev1.ImageVolumeSource, p *field.Path) field.ErrorList {
	errs := volume.Required(image.Reference, p.Child("reference"))
	switch image.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever, "":
	default:
		errs = append(errs, field.NotSupported(p.Child("pullPolicy"), image.PullPolicy, []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
	}
	return errs
}
