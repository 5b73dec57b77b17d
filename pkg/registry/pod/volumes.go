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
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/certificatesigningrequest"
)

// validateVolumes is upstream's ValidateVolumes as for a template (with no
// pod's name, it skips the checks of ephemeral volumes' claims' names): it
// returns the valid volumes' sources.
func validateVolumes(volumes []corev1.Volume, p *field.Path) (volumeSources, field.ErrorList) {
	var errs field.ErrorList
	names := volumeSources{}
	for i, v := range volumes {
		ip := p.Index(i)
		el := append(validateVolumeSource(&v.VolumeSource, v.Name, ip), required(v.Name, ip.Child("name"))...)
		el = append(el, dns1123Label(v.Name, ip.Child("name"))...)
		if _, ok := names[v.Name]; ok {
			el = append(el, field.Duplicate(ip.Child("name"), v.Name))
		}
		if len(el) == 0 {
			names[v.Name] = v.VolumeSource
		}
		errs = append(errs, el...)
	}
	return names, errs
}

// volumeType is a kind of source: its name, whether set, and its check.
type volumeType struct {
	name     string
	set      bool
	validate func() field.ErrorList
}

// source is the volumeType of a source s (nil if not set) checked at p.
func source[T any](name string, s *T, p *field.Path, validate func(*T, *field.Path) field.ErrorList) volumeType {
	return volumeType{name, s != nil, func() field.ErrorList { return validate(s, p) }}
}

// volumeTypes are upstream's, in its order and with its paths.
func volumeTypes(s *corev1.VolumeSource, p *field.Path) []volumeType {
	return []volumeType{
		source("emptyDir", s.EmptyDir, p.Child("emptyDir"), validateEmptyDir),
		source("hostPath", s.HostPath, p.Child("hostPath"), validateHostPath),
		source("gitRepo", s.GitRepo, p.Child("gitRepo"), validateGitRepo),
		source("gcePersistentDisk", s.GCEPersistentDisk, p.Child("persistentDisk"), validateGCEPersistentDisk),
		source("awsElasticBlockStore", s.AWSElasticBlockStore, p.Child("awsElasticBlockStore"), validateAWSElasticBlockStore),
		source("secret", s.Secret, p.Child("secret"), validateSecretVolume),
		source("nfs", s.NFS, p.Child("nfs"), validateNFS),
		source("iscsi", s.ISCSI, p.Child("iscsi"), validateISCSI),
		source("glusterfs", s.Glusterfs, p.Child("glusterfs"), validateGlusterfs),
		source("flocker", s.Flocker, p.Child("flocker"), validateFlocker),
		source("persistentVolumeClaim", s.PersistentVolumeClaim, p.Child("persistentVolumeClaim"), requiredField("claimName", func(c *corev1.PersistentVolumeClaimVolumeSource) bool { return c.ClaimName == "" })),
		source("rbd", s.RBD, p.Child("rbd"), validateRBD),
		source("cinder", s.Cinder, p.Child("cinder"), validateCinder),
		source("cephFS", s.CephFS, p.Child("cephfs"), requiredField("monitors", func(c *corev1.CephFSVolumeSource) bool { return len(c.Monitors) == 0 })),
		source("quobyte", s.Quobyte, p.Child("quobyte"), validateQuobyte),
		source("downwarAPI", s.DownwardAPI, p.Child("downwardAPI"), validateDownwardAPIVolume),
		source("fc", s.FC, p.Child("fc"), validateFC),
		source("flexVolume", s.FlexVolume, p.Child("flexVolume"), validateFlexVolume),
		source("configMap", s.ConfigMap, p.Child("configMap"), validateConfigMapVolume),
		source("azureFile", s.AzureFile, p.Child("azureFile"), validateAzureFile),
		source("vsphereVolume", s.VsphereVolume, p.Child("vsphereVolume"), requiredField("volumePath", func(v *corev1.VsphereVirtualDiskVolumeSource) bool { return v.VolumePath == "" })),
		source("photonPersistentDisk", s.PhotonPersistentDisk, p.Child("photonPersistentDisk"), requiredField("pdID", func(d *corev1.PhotonPersistentDiskVolumeSource) bool { return d.PdID == "" })),
		source("portworxVolume", s.PortworxVolume, p.Child("portworxVolume"), requiredField("volumeID", func(v *corev1.PortworxVolumeSource) bool { return v.VolumeID == "" })),
		source("azureDisk", s.AzureDisk, p.Child("azureDisk"), validateAzureDisk),
		source("storageos", s.StorageOS, p.Child("storageos"), validateStorageOS),
		source("projected", s.Projected, p.Child("projected"), validateProjected),
		source("scaleIO", s.ScaleIO, p.Child("scaleIO"), validateScaleIO),
		source("csi", s.CSI, p.Child("csi"), validateCSIVolume),
		source("ephemeral", s.Ephemeral, p.Child("ephemeral"), validateEphemeralVolume),
		source("image", s.Image, p.Child("image"), validateImageVolume),
	}
}

// validateVolumeSource is upstream's: one source, valid (a second is not
// checked); and, even for a second, a short iSCSI name with an initiator.
func validateVolumeSource(s *corev1.VolumeSource, volName string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, t := range volumeTypes(s, p) {
		switch {
		case !t.set:
		case n > 0:
			errs = append(errs, field.Forbidden(p.Child(t.name), "may not specify more than 1 volume type"))
		default:
			n++
			errs = append(errs, t.validate()...)
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

// required is upstream's Required error of an empty value.
func required(value string, p *field.Path) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}

// requiredList is upstream's Required error of an empty list of n items.
func requiredList(n int, p *field.Path) field.ErrorList {
	if n == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
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

// hostPathTypes are upstream's supportedHostPathTypes, sorted.
var hostPathTypes = sets.List(sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev))

// validateHostPath is upstream's validateHostPathVolumeSource.
func validateHostPath(h *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if h.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	errs := validatePathNoBacksteps(h.Path, p.Child("path"))
	if h.Type != nil && !slices.Contains(hostPathTypes, *h.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), h.Type, hostPathTypes))
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
	return append(errs, validatePathNoBacksteps(target, p)...)
}

// validatePathNoBacksteps is upstream's: one error for any ".." elements.
func validatePathNoBacksteps(target string, p *field.Path) field.ErrorList {
	if slices.Contains(strings.Split(target, "/"), "..") {
		return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
	}
	return nil
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

// validateProjected is upstream's validateProjectedVolumeSource and
// validateProjectionSources: one kind per source, each path once.
func validateProjected(proj *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(proj.DefaultMode, p.Child("defaultMode"))
	errs = append(errs, validateUserField(proj.DefaultUser, p.Child("defaultUser"))...)
	paths := sets.New[string]()
	for i := range proj.Sources {
		src, sp := &proj.Sources[i], p.Child("sources").Index(i)
		n := 0
		if s := src.Secret; s != nil {
			n++
			errs = append(errs, validateProjectedKeys(s.Name, s.Items, paths, p, sp.Child("secret"))...)
		}
		if c := src.ConfigMap; c != nil {
			n++
			errs = append(errs, validateProjectedKeys(c.Name, c.Items, paths, p, sp.Child("configMap"))...)
		}
		if d := src.DownwardAPI; d != nil {
			n++
			for _, file := range d.Items {
				errs = append(errs, validateDownwardAPIFile(&file, sp.Child("downwardAPI"))...)
				if file.Path != "" {
					errs = append(errs, claimPath(paths, file.Path, file.Path, p)...)
				}
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			errs = append(errs, validateTokenProjection(t, p, sp.Child("serviceAccountToken"))...)
		}
		if b := src.ClusterTrustBundle; b != nil {
			n++
			errs = append(errs, validateTrustBundleProjection(b, sp.Child("clusterTrustBundle"))...)
			errs = append(errs, claimPath(paths, b.Path, b.Path, p)...)
		}
		if c := src.PodCertificate; c != nil {
			n++
			errs = append(errs, validatePodCertificateProjection(c, paths, p, sp.Child("podCertificate"))...)
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

// claimPath records a projected path; upstream's error (of value) if seen.
func claimPath(paths sets.Set[string], path string, value string, p *field.Path) field.ErrorList {
	if paths.Has(path) {
		return field.ErrorList{field.Invalid(p, value, "conflicting duplicate paths")}
	}
	paths.Insert(path)
	return nil
}

// validateProjectedKeys is upstream's check of a secret's or config map's.
func validateProjectedKeys(name string, items []corev1.KeyToPath, paths sets.Set[string], p, sp *field.Path) field.ErrorList {
	errs := required(name, sp.Child("name"))
	for i, kp := range items {
		errs = append(errs, validateKeyToPath(&kp, sp.Child("items").Index(i))...)
		if kp.Path != "" {
			errs = append(errs, claimPath(paths, kp.Path, name, p)...)
		}
	}
	return errs
}

// validateTokenProjection is upstream's check of a token's: an expiry, a
// local path (at p, as upstream's; upstream lets a pod that had another keep it).
func validateTokenProjection(t *corev1.ServiceAccountTokenProjection, p, tp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch exp := t.ExpirationSeconds; {
	case exp == nil:
		errs = append(errs, field.Required(tp.Child("expirationSeconds"), ""))
	case *exp < 10*60:
		errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
	case *exp > 1<<32:
		errs = append(errs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
	}
	if t.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	} else {
		errs = append(errs, validateLocalNonReservedPath(t.Path, p.Child("path"))...)
	}
	return append(errs, validateUserField(t.User, tp.Child("user"))...)
}

// validateTrustBundleProjection is upstream's check of a cluster trust
// bundle's: a bundle's name, or a signer's and a selector; a local path.
func validateTrustBundleProjection(b *corev1.ClusterTrustBundleProjection, bp *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Name != nil && b.SignerName != nil:
		errs = append(errs, field.Invalid(bp, b, "only one of name and signerName may be used"))
	case b.Name != nil:
		name := *b.Name
		if name == "" {
			errs = append(errs, field.Required(bp.Child("name"), "must be a valid object name"))
		}
		for _, msg := range trustBundleNameErrors(name) {
			errs = append(errs, field.Invalid(bp.Child("name"), name, fmt.Sprintf("not a valid clustertrustbundlename: %v", msg)))
		}
		if b.LabelSelector != nil {
			errs = append(errs, field.Invalid(bp.Child("labelSelector"), b.LabelSelector, "labelSelector must be unset if name is specified"))
		}
	case b.SignerName != nil:
		if *b.SignerName == "" {
			errs = append(errs, field.Required(bp.Child("signerName"), "must be a valid signer name"))
		}
		errs = append(errs, certificatesigningrequest.ValidateSignerName(bp.Child("signerName"), *b.SignerName)...)
		errs = append(errs, metav1validation.ValidateLabelSelector(b.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, bp.Child("labelSelector"))...)
	default:
		errs = append(errs, field.Required(bp, "either name or signerName must be specified"))
	}
	errs = append(errs, required(b.Path, bp.Child("path"))...)
	errs = append(errs, validateUserField(b.User, bp.Child("user"))...)
	return append(errs, validateLocalNonReservedPath(b.Path, bp.Child("path"))...)
}

// trustBundleNameErrors is upstream's ValidateClusterTrustBundleName of
// the signer the name names (up to its last ':', with '/' for ':'), if any:
// a DNS subdomain without ':', or one prefixed by the signer's name.
func trustBundleNameErrors(name string) []string {
	i := strings.LastIndex(name, ":")
	if i == -1 {
		return apimachineryvalidation.NameIsDNSSubdomain(name, false)
	}
	signerName := strings.ReplaceAll(name[:i], ":", "/")
	if signerName == "" {
		return []string{"ClusterTrustBundle without signer name must not have \":\" in its name"}
	}
	prefix := strings.ReplaceAll(signerName, "/", ":") + ":"
	if !strings.HasPrefix(name, prefix) {
		return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, prefix)}
	}
	return apimachineryvalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, prefix), false)
}

// validatePodCertificateProjection is upstream's check of a pod
// certificate's: signer, annotations, key type, expiry, local paths.
func validatePodCertificateProjection(c *corev1.PodCertificateProjection, paths sets.Set[string], p, cp *field.Path) field.ErrorList {
	errs := certificatesigningrequest.ValidateSignerName(cp.Child("signerName"), c.SignerName)
	if c.UserAnnotations != nil {
		errs = append(errs, validateCertificateUserAnnotations(c.UserAnnotations, cp.Child("userAnnotations"))...)
	}
	errs = append(errs, validateUserField(c.User, cp.Child("user"))...)
	if keyTypes := []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}; !slices.Contains(keyTypes, c.KeyType) {
		errs = append(errs, field.NotSupported(cp.Child("keyType"), c.KeyType, keyTypes))
	}
	if exp := c.MaxExpirationSeconds; exp != nil {
		if *exp < 3600 {
			errs = append(errs, field.Invalid(cp.Child("maxExpirationSeconds"), *exp, "if provided, maxExpirationSeconds must be >= 3600"))
		}
		maxExp := 91 * 24 * 60 * 60
		if host, _, _ := strings.Cut(c.SignerName, "/"); host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io") {
			maxExp = 24 * 60 * 60
		}
		if *exp > int32(maxExp) {
			errs = append(errs, field.Invalid(cp.Child("maxExpirationSeconds"), *exp, fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", maxExp)))
		}
	}
	n := 0
	for _, f := range []struct{ name, path string }{
		{"credentialBundlePath", c.CredentialBundlePath}, {"keyPath", c.KeyPath}, {"certificateChainPath", c.CertificateChainPath},
	} {
		if f.path != "" {
			n++
			errs = append(errs, validateLocalNonReservedPath(f.path, cp.Child(f.name))...)
			errs = append(errs, claimPath(paths, f.path, f.path, p)...)
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(cp, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	return errs
}

// validateCertificateUserAnnotations is upstream's ValidateUserAnnotations,
// in the keys' order (upstream ranges over the map).
func validateCertificateUserAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		errs = append(errs, validation.IsDomainPrefixedKey(p, strings.ToLower(k))...)
	}
	if apimachineryvalidation.ValidateAnnotationsSize(annotations) != nil {
		errs = append(errs, field.TooLong(p, "" /*unused*/, apimachineryvalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}
