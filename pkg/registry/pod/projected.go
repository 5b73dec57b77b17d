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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry/certificatesigningrequest"
)

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
	errs := volume.Required(name, sp.Child("name"))
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
	errs = append(errs, volume.Required(b.Path, bp.Child("path"))...)
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
