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
	"maps"
	"net"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/persistentvolumeclaim"
)

// validateGitRepo is upstream's validateGitRepoVolumeSource.
func validateGitRepo(g *corev1.GitRepoVolumeSource, p *field.Path) field.ErrorList {
	return append(required(g.Repository, p.Child("repository")), validateLocalDescendingPath(g.Directory, p.Child("directory"))...)
}

// validatePartition is upstream's check of a disk's partition.
func validatePartition(partition int32, p *field.Path) field.ErrorList {
	if partition < 0 || partition > 255 {
		return field.ErrorList{field.Invalid(p, partition, validation.InclusiveRangeError(1, 255))}
	}
	return nil
}

// validateGCEPersistentDisk is upstream's validateGCEPersistentDiskVolumeSource.
func validateGCEPersistentDisk(pd *corev1.GCEPersistentDiskVolumeSource, p *field.Path) field.ErrorList {
	return append(required(pd.PDName, p.Child("pdName")), validatePartition(pd.Partition, p.Child("partition"))...)
}

// validateAWSElasticBlockStore is upstream's validateAWSElasticBlockStoreVolumeSource.
func validateAWSElasticBlockStore(pd *corev1.AWSElasticBlockStoreVolumeSource, p *field.Path) field.ErrorList {
	return append(required(pd.VolumeID, p.Child("volumeID")), validatePartition(pd.Partition, p.Child("partition"))...)
}

// validateSecretVolume is upstream's validateSecretVolumeSource.
func validateSecretVolume(s *corev1.SecretVolumeSource, p *field.Path) field.ErrorList {
	return append(required(s.SecretName, p.Child("secretName")), validateKeyFiles(s.DefaultMode, s.DefaultUser, s.Items, p)...)
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
	errs := append(required(kp.Key, p.Child("key")), required(kp.Path, p.Child("path"))...)
	errs = append(errs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	errs = append(errs, validateFileMode(kp.Mode, p.Child("mode"))...)
	return append(errs, validateUserField(kp.User, p.Child("user"))...)
}

// validateNFS is upstream's validateNFSVolumeSource.
func validateNFS(nfs *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	errs := append(required(nfs.Server, p.Child("server")), required(nfs.Path, p.Child("path"))...)
	if !path.IsAbs(nfs.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return errs
}

// iscsiNameFormats are upstream's formats of iSCSI qualified names, by
// prefix (which exclude each other).
var iscsiNameFormats = map[string]*regexp.Regexp{
	"iqn": regexp.MustCompile(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`),
	"eui": regexp.MustCompile(`^eui.[[:alnum:]]{16}$`),
	"naa": regexp.MustCompile(`^naa.[[:alnum:]]{32}$`),
}

// iscsiNameErrors is upstream's check of an iSCSI qualified name.
func iscsiNameErrors(name string, p *field.Path) field.ErrorList {
	for prefix, format := range iscsiNameFormats {
		if strings.HasPrefix(name, prefix) && !format.MatchString(name) {
			return field.ErrorList{field.Invalid(p, name, "must be valid format")}
		} else if strings.HasPrefix(name, prefix) {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p, name, "must be valid format starting with iqn, eui, or naa")}
}

// validateISCSI is upstream's validateISCSIVolumeSource.
func validateISCSI(iscsi *corev1.ISCSIVolumeSource, p *field.Path) field.ErrorList {
	errs := required(iscsi.TargetPortal, p.Child("targetPortal"))
	errs = append(errs, required(iscsi.IQN, p.Child("iqn"))...)
	if iscsi.IQN != "" {
		errs = append(errs, iscsiNameErrors(iscsi.IQN, p.Child("iqn"))...)
	}
	if iscsi.Lun < 0 || iscsi.Lun > 255 {
		errs = append(errs, field.Invalid(p.Child("lun"), iscsi.Lun, validation.InclusiveRangeError(0, 255)))
	}
	if (iscsi.DiscoveryCHAPAuth || iscsi.SessionCHAPAuth) && iscsi.SecretRef == nil {
		errs = append(errs, field.Required(p.Child("secretRef"), ""))
	}
	if iscsi.InitiatorName != nil {
		errs = append(errs, iscsiNameErrors(*iscsi.InitiatorName, p.Child("initiatorname"))...)
	}
	return errs
}

// requiredField is upstream's check of a source with one required field
// (name), missing if missing says so.
func requiredField[T any](name string, missing func(*T) bool) func(*T, *field.Path) field.ErrorList {
	return func(s *T, p *field.Path) field.ErrorList {
		if missing(s) {
			return field.ErrorList{field.Required(p.Child(name), "")}
		}
		return nil
	}
}

// validateGlusterfs is upstream's validateGlusterfsVolumeSource.
func validateGlusterfs(g *corev1.GlusterfsVolumeSource, p *field.Path) field.ErrorList {
	return append(required(g.EndpointsName, p.Child("endpoints")), required(g.Path, p.Child("path"))...)
}

// validateFlocker is upstream's validateFlockerVolumeSource.
func validateFlocker(f *corev1.FlockerVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.DatasetName == "" && f.DatasetUUID == "" {
		errs = append(errs, field.Required(p, "one of datasetName and datasetUUID is required"))
	}
	if f.DatasetName != "" && f.DatasetUUID != "" {
		errs = append(errs, field.Invalid(p, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
	}
	if strings.Contains(f.DatasetName, "/") {
		errs = append(errs, field.Invalid(p.Child("datasetName"), f.DatasetName, "must not contain '/'"))
	}
	return errs
}

// validateRBD is upstream's validateRBDVolumeSource.
func validateRBD(rbd *corev1.RBDVolumeSource, p *field.Path) field.ErrorList {
	return append(requiredList(len(rbd.CephMonitors), p.Child("monitors")), required(rbd.RBDImage, p.Child("image"))...)
}

// validateCinder is upstream's validateCinderVolumeSource.
func validateCinder(c *corev1.CinderVolumeSource, p *field.Path) field.ErrorList {
	errs := required(c.VolumeID, p.Child("volumeID"))
	if c.SecretRef != nil {
		errs = append(errs, required(c.SecretRef.Name, p.Child("secretRef", "name"))...)
	}
	return errs
}

// validateQuobyte is upstream's validateQuobyteVolumeSource.
func validateQuobyte(q *corev1.QuobyteVolumeSource, p *field.Path) field.ErrorList {
	const registryMsg = "must be a host:port pair or multiple pairs separated by commas"
	var errs field.ErrorList
	switch {
	case q.Registry == "":
		errs = append(errs, field.Required(p.Child("registry"), registryMsg))
	case len(q.Tenant) >= 65:
		errs = append(errs, field.Required(p.Child("tenant"), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, pair := range strings.Split(q.Registry, ",") {
			if _, _, err := net.SplitHostPort(pair); err != nil {
				errs = append(errs, field.Invalid(p.Child("registry"), q.Registry, registryMsg))
			}
		}
	}
	return append(errs, required(q.Volume, p.Child("volume"))...)
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
	errs := append(required(file.Path, p.Child("path")), validateLocalNonReservedPath(file.Path, p.Child("path"))...)
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

// validateFC is upstream's validateFCVolumeSource.
func validateFC(fc *corev1.FCVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(fc.TargetWWNs) < 1 && len(fc.WWIDs) < 1 {
		errs = append(errs, field.Required(p.Child("targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(fc.TargetWWNs) != 0 && len(fc.WWIDs) != 0 {
		errs = append(errs, field.Invalid(p.Child("targetWWNs"), fc.TargetWWNs, "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(fc.TargetWWNs) != 0 {
		if fc.Lun == nil {
			errs = append(errs, field.Required(p.Child("lun"), "lun is required if targetWWNs is specified"))
		} else if *fc.Lun < 0 || *fc.Lun > 255 {
			errs = append(errs, field.Invalid(p.Child("lun"), fc.Lun, validation.InclusiveRangeError(0, 255)))
		}
	}
	return errs
}

// validateFlexVolume is upstream's validateFlexVolumeSource, in the keys'
// order (upstream ranges over the map).
func validateFlexVolume(f *corev1.FlexVolumeSource, p *field.Path) field.ErrorList {
	errs := required(f.Driver, p.Child("driver"))
	for _, k := range slices.Sorted(maps.Keys(f.Options)) {
		namespace, _, _ := strings.Cut(k, "/")
		normalized := "." + strings.ToLower(namespace)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			errs = append(errs, field.Invalid(p.Child("options").Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return errs
}

// validateConfigMapVolume is upstream's validateConfigMapVolumeSource.
func validateConfigMapVolume(c *corev1.ConfigMapVolumeSource, p *field.Path) field.ErrorList {
	return append(required(c.Name, p.Child("name")), validateKeyFiles(c.DefaultMode, c.DefaultUser, c.Items, p)...)
}

// validateAzureFile is upstream's.
func validateAzureFile(a *corev1.AzureFileVolumeSource, p *field.Path) field.ErrorList {
	return append(required(a.SecretName, p.Child("secretName")), required(a.ShareName, p.Child("shareName"))...)
}

// Upstream's Azure disks' caching modes and kinds, sorted.
var (
	azureCachingModes = []corev1.AzureDataDiskCachingMode{corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite}
	azureDiskKinds    = []corev1.AzureDataDiskKind{corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk, corev1.AzureSharedBlobDisk}
)

// validateAzureDisk is upstream's; a kind not set is its default, Shared.
func validateAzureDisk(a *corev1.AzureDiskVolumeSource, p *field.Path) field.ErrorList {
	errs := append(required(a.DiskName, p.Child("diskName")), required(a.DataDiskURI, p.Child("diskURI"))...)
	if a.CachingMode != nil && !slices.Contains(azureCachingModes, *a.CachingMode) {
		errs = append(errs, field.NotSupported(p.Child("cachingMode"), *a.CachingMode, azureCachingModes))
	}
	kind := ptr.Deref(a.Kind, corev1.AzureSharedBlobDisk)
	if !slices.Contains(azureDiskKinds, kind) {
		errs = append(errs, field.NotSupported(p.Child("kind"), kind, azureDiskKinds))
	}
	if kind == corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "/subscriptions/") {
		errs = append(errs, field.NotSupported(p.Child("diskURI"), a.DataDiskURI, []string{"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"}))
	}
	if kind != corev1.AzureManagedDisk && !strings.HasPrefix(a.DataDiskURI, "https://") {
		errs = append(errs, field.NotSupported(p.Child("diskURI"), a.DataDiskURI, []string{"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"}))
	}
	return errs
}

// validateStorageOS is upstream's validateStorageOSVolumeSource.
func validateStorageOS(s *corev1.StorageOSVolumeSource, p *field.Path) field.ErrorList {
	errs := append(required(s.VolumeName, p.Child("volumeName")), dns1123Label(s.VolumeName, p.Child("volumeName"))...)
	errs = append(errs, dns1123Label(s.VolumeNamespace, p.Child("volumeNamespace"))...)
	if s.SecretRef != nil {
		errs = append(errs, required(s.SecretRef.Name, p.Child("secretRef", "name"))...)
	}
	return errs
}

// validateScaleIO is upstream's validateScaleIOVolumeSource.
func validateScaleIO(s *corev1.ScaleIOVolumeSource, p *field.Path) field.ErrorList {
	errs := append(required(s.Gateway, p.Child("gateway")), required(s.System, p.Child("system"))...)
	return append(errs, required(s.VolumeName, p.Child("volumeName"))...)
}

// validateCSIVolume is upstream's validateCSIVolumeSource (with
// ValidateCSIDriverName); a secret's name's errors at csi.name, as upstream's.
func validateCSIVolume(c *corev1.CSIVolumeSource, p *field.Path) field.ErrorList {
	errs := required(c.Driver, p.Child("driver"))
	if len(c.Driver) > 63 {
		errs = append(errs, field.TooLong(p.Child("driver"), "" /*unused*/, 63))
	}
	if c.Driver != "" {
		for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(c.Driver)) {
			errs = append(errs, field.Invalid(p.Child("driver"), c.Driver, msg))
		}
	}
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
	errs := required(image.Reference, p.Child("reference"))
	switch image.PullPolicy {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever, "":
	default:
		errs = append(errs, field.NotSupported(p.Child("pullPolicy"), image.PullPolicy, []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
	}
	return errs
}
