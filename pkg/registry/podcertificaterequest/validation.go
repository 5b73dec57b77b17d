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

package podcertificaterequest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/certificatesigningrequest"
)

// Upstream's limits (k8s.io/kubernetes pkg/apis/certificates).
const (
	maxStubPKCS10RequestSize          = 10 * 1024
	maxCertificateChainSize           = 100 * 1024
	minMaxExpirationSeconds           = 60 * 60
	maxMaxExpirationSeconds           = 91 * 24 * 60 * 60
	kubernetesMaxMaxExpirationSeconds = 24 * 60 * 60
	maxUIDLength                      = 128
)

var (
	specPath         = field.NewPath("spec")
	pkixPath         = field.NewPath("spec", "pkixPublicKey")
	pkcs10ReqPath    = field.NewPath("spec", "stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

// validateCreate is upstream's ValidatePodCertificateRequestCreate but for
// the metadata (the registry's strategy checks it, as upstream does). v1
// has no pkixPublicKey nor proofOfPossession, the deprecated key fields
// of v1beta1: a v1 request carries its key in stubPKCS10Request.
func validateCreate(req *certificatesv1.PodCertificateRequest) field.ErrorList {
	spec := &req.Spec
	errs := certificatesigningrequest.ValidateSignerName(specPath.Child("signerName"), spec.SignerName)
	if spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(spec.UnverifiedUserAnnotations, specPath.Child("unverifiedUserAnnotations"))...)
	}
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.PodName, false) {
		errs = append(errs, field.Invalid(specPath.Child("podName"), spec.PodName, msg))
	}
	errs = append(errs, validateUID(specPath.Child("podUID"), spec.PodUID)...)
	for _, msg := range apimachineryvalidation.ValidateServiceAccountName(spec.ServiceAccountName, false) {
		errs = append(errs, field.Invalid(specPath.Child("serviceAccountName"), spec.ServiceAccountName, msg))
	}
	errs = append(errs, validateUID(specPath.Child("serviceAccountUID"), spec.ServiceAccountUID)...)
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(string(spec.NodeName), false) {
		errs = append(errs, field.Invalid(specPath.Child("nodeName"), spec.NodeName, msg))
	}
	errs = append(errs, validateUID(specPath.Child("nodeUID"), spec.NodeUID)...)

	if spec.MaxExpirationSeconds == nil {
		return append(errs, field.Required(specPath.Child("maxExpirationSeconds"), "must be set"))
	}
	maxMax := maxMaxExpirationSeconds
	if isKubernetesSignerName(spec.SignerName) {
		maxMax = kubernetesMaxMaxExpirationSeconds
	}
	if s := int(*spec.MaxExpirationSeconds); s < minMaxExpirationSeconds || s > maxMax {
		errs = append(errs, field.Invalid(specPath.Child("maxExpirationSeconds"), spec.MaxExpirationSeconds,
			fmt.Sprintf("must be in the range [%d, %d]", minMaxExpirationSeconds, maxMax)))
	}
	if len(spec.StubPKCS10Request) == 0 {
		return append(errs, field.Invalid(specPath, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(errs, validateStubPKCS10Request(spec.StubPKCS10Request)...)
}

// validateUID is upstream's check of each of the spec's UIDs.
func validateUID(path *field.Path, uid types.UID) field.ErrorList {
	var errs field.ErrorList
	if len(uid) == 0 {
		errs = append(errs, field.Invalid(path, uid, "must not be empty"))
	}
	if len(uid) > maxUIDLength {
		errs = append(errs, field.TooLong(path, uid, maxUIDLength))
	}
	return errs
}

// validateUserAnnotations is upstream's ValidateUserAnnotations (k8s.io/kubernetes
// pkg/apis/core/validation): domain-prefixed keys, in any case, and
// annotations' total size.
func validateUserAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range annotations {
		errs = append(errs, validation.IsDomainPrefixedKey(path, strings.ToLower(k))...)
	}
	if err := apimachineryvalidation.ValidateAnnotationsSize(annotations); err != nil {
		errs = append(errs, field.TooLong(path, "" /*unused*/, apimachineryvalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// isKubernetesSignerName is upstream's IsKubernetesSignerName: a signer
// of kubernetes.io or of one of its subdomains.
func isKubernetesSignerName(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// validateStubPKCS10Request is upstream's: a DER CSR, self-signed, with
// an Ed25519, ECDSA (P-256, P-384, P-521) or RSA (3072 or 4096 bits) key;
// what else it says is the signer's to judge.
func validateStubPKCS10Request(der []byte) field.ErrorList {
	if len(der) > maxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pkcs10ReqPath, der, maxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

// internalSpec is upstream's internal PodCertificateRequestSpec, field for
// field: the value its immutable-spec error shows (JSON of a type without
// JSON tags), so that ours reads as upstream's.
type internalSpec struct {
	SignerName                string
	PodName                   string
	PodUID                    types.UID
	ServiceAccountName        string
	ServiceAccountUID         types.UID
	NodeName                  types.NodeName
	NodeUID                   types.UID
	MaxExpirationSeconds      *int32
	PKIXPublicKey             []byte
	ProofOfPossession         []byte
	StubPKCS10Request         []byte
	UnverifiedUserAnnotations map[string]string
}

// validateUpdate is upstream's ValidatePodCertificateRequestUpdate but for
// the metadata (k8s.io/apiserver's rest.ValidateUpdate checks it): the
// spec never changes.
func validateUpdate(req, old *certificatesv1.PodCertificateRequest) field.ErrorList {
	if apiequality.Semantic.DeepEqual(req.Spec, old.Spec) {
		return nil
	}
	s := req.Spec
	shown := internalSpec{SignerName: s.SignerName, PodName: s.PodName, PodUID: s.PodUID, ServiceAccountName: s.ServiceAccountName,
		ServiceAccountUID: s.ServiceAccountUID, NodeName: s.NodeName, NodeUID: s.NodeUID, MaxExpirationSeconds: s.MaxExpirationSeconds,
		StubPKCS10Request: s.StubPKCS10Request, UnverifiedUserAnnotations: s.UnverifiedUserAnnotations}
	return field.ErrorList{field.Invalid(specPath, shown, apimachineryvalidation.FieldImmutableErrorMsg)}
}
