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

// Package volume validates volume sources as upstream's core validation
// does, for the kinds that hold them: pods and templates, and persistent
// volumes.
package volume

import (
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// diskPartition is upstream's check of a disk's partition.
func diskPartition(partition int32, p *field.Path) field.ErrorList {
	if partition < 0 || partition > 255 {
		return field.ErrorList{field.Invalid(p, partition, validation.InclusiveRangeError(1, 255))}
	}
	return nil
}

// GCEPersistentDisk is upstream's validateGCEPersistentDiskVolumeSource.
func GCEPersistentDisk(pd *corev1.GCEPersistentDiskVolumeSource, p *field.Path) field.ErrorList {
	return append(Required(pd.PDName, p.Child("pdName")), diskPartition(pd.Partition, p.Child("partition"))...)
}

// AWSElasticBlockStore is upstream's validateAWSElasticBlockStoreVolumeSource.
func AWSElasticBlockStore(pd *corev1.AWSElasticBlockStoreVolumeSource, p *field.Path) field.ErrorList {
	return append(Required(pd.VolumeID, p.Child("volumeID")), diskPartition(pd.Partition, p.Child("partition"))...)
}

// NFS is upstream's validateNFSVolumeSource.
func NFS(nfs *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	errs := append(Required(nfs.Server, p.Child("server")), Required(nfs.Path, p.Child("path"))...)
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

// ISCSIName is upstream's check of an iSCSI qualified name; unknown is
// its message for a name of no known format (pods' and volumes' differ).
func ISCSIName(name, unknown string, p *field.Path) field.ErrorList {
	for prefix, format := range iscsiNameFormats {
		if strings.HasPrefix(name, prefix) && !format.MatchString(name) {
			return field.ErrorList{field.Invalid(p, name, "must be valid format")}
		} else if strings.HasPrefix(name, prefix) {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(p, name, unknown)}
}

// RequiredField is upstream's check of a source with one required field
// (name), missing if missing says so.
func RequiredField[T any](name string, missing func(*T) bool) func(*T, *field.Path) field.ErrorList {
	return func(s *T, p *field.Path) field.ErrorList {
		if missing(s) {
			return field.ErrorList{field.Required(p.Child(name), "")}
		}
		return nil
	}
}

// Flocker is upstream's validateFlockerVolumeSource.
func Flocker(f *corev1.FlockerVolumeSource, p *field.Path) field.ErrorList {
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

// Quobyte is upstream's validateQuobyteVolumeSource.
func Quobyte(q *corev1.QuobyteVolumeSource, p *field.Path) field.ErrorList {
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
	return append(errs, Required(q.Volume, p.Child("volume"))...)
}

// FC is upstream's validateFCVolumeSource.
func FC(fc *corev1.FCVolumeSource, p *field.Path) field.ErrorList {
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

// Upstream's Azure disks' caching modes and kinds, sorted.
var (
	azureCachingModes = []corev1.AzureDataDiskCachingMode{corev1.AzureDataDiskCachingNone, corev1.AzureDataDiskCachingReadOnly, corev1.AzureDataDiskCachingReadWrite}
	azureDiskKinds    = []corev1.AzureDataDiskKind{corev1.AzureDedicatedBlobDisk, corev1.AzureManagedDisk, corev1.AzureSharedBlobDisk}
)

// AzureDisk is upstream's; a kind not set is its default, Shared.
func AzureDisk(a *corev1.AzureDiskVolumeSource, p *field.Path) field.ErrorList {
	errs := append(Required(a.DiskName, p.Child("diskName")), Required(a.DataDiskURI, p.Child("diskURI"))...)
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

// Required is upstream's Required error of an empty value.
func Required(value string, p *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

// RequiredList is upstream's Required error of an empty list of n items.
func RequiredList(n int, p *field.Path) field.ErrorList {
	if n == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

// hostPathTypes are upstream's supportedHostPathTypes, sorted.
var hostPathTypes = sets.List(sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev))

// HostPath is upstream's validateHostPathVolumeSource.
func HostPath(h *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := PathNoBacksteps(h.Path, p.Child("path"))
	if h.Type != nil && !slices.Contains(hostPathTypes, *h.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), h.Type, hostPathTypes))
	}
	return errs
}

// PathNoBacksteps is upstream's: one error for any ".." elements.
func PathNoBacksteps(target string, p *field.Path) field.ErrorList {
	if slices.Contains(strings.Split(target, "/"), "..") {
		return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
	}
	return nil
}

// FlexOptions is upstream's check of a flex volume's options, in the
// keys' order (upstream ranges over the map): no kubernetes.io or k8s.io
// prefix.
func FlexOptions(options map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(options)) {
		namespace, _, _ := strings.Cut(k, "/")
		normalized := "." + strings.ToLower(namespace)
		if strings.HasSuffix(normalized, ".kubernetes.io") || strings.HasSuffix(normalized, ".k8s.io") {
			errs = append(errs, field.Invalid(p.Key(k), k, "kubernetes.io and k8s.io namespaces are reserved"))
		}
	}
	return errs
}

// The sources checked for their one required field, as upstream's
// validateVsphereVolumeSource, validatePhotonPersistentDiskVolumeSource
// and validatePortworxVolumeSource.
var (
	Vsphere  = RequiredField("volumePath", func(v *corev1.VsphereVirtualDiskVolumeSource) bool { return v.VolumePath == "" })
	Photon   = RequiredField("pdID", func(d *corev1.PhotonPersistentDiskVolumeSource) bool { return d.PdID == "" })
	Portworx = RequiredField("volumeID", func(v *corev1.PortworxVolumeSource) bool { return v.VolumeID == "" })
)

// CSIDriverName is upstream's ValidateCSIDriverName.
func CSIDriverName(driver string, p *field.Path) field.ErrorList {
	if driver == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(driver) > 63 {
		errs = append(errs, field.TooLong(p, "" /*unused*/, 63))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(driver)) {
		errs = append(errs, field.Invalid(p, driver, msg))
	}
	return errs
}

// CoveredCSIDriverName is CSIDriverName of a field whose rules are
// declared too (a volume attachment's attacher, DRA's drivers): each
// error marked covered by declarative validation, with its rule's origin.
func CoveredCSIDriverName(driver string, p *field.Path) field.ErrorList {
	errs := CSIDriverName(driver, p)
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeTooLong:
			e.WithOrigin("maxLength")
		case field.ErrorTypeInvalid:
			e.WithOrigin("format=k8s-long-name-caseless")
		}
		e.MarkCoveredByDeclarative()
	}
	return errs
}
