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
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// terminalTypes are the condition types a status may have, each once at
// most and only True: every one ends the request.
var terminalTypes = []string{
	certificatesv1.PodCertificateRequestConditionTypeIssued,
	certificatesv1.PodCertificateRequestConditionTypeDenied,
	certificatesv1.PodCertificateRequestConditionTypeFailed,
}

// validateStatusUpdate is upstream's
// ValidatePodCertificateRequestStatusUpdate: a status is written once,
// to issue (a chain whose leaf certifies the request's key, with its
// times), deny or fail the request, and never changes after.
func validateStatusUpdate(req, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	// k8s.io/apiserver's rest.ValidateUpdate reports the metadata's errors;
	// upstream stops at them.
	if len(apimachineryvalidation.ValidateObjectMetaUpdate(&req.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))) > 0 {
		return nil
	}
	errs := validateConditions(req.Status.Conditions)
	if len(errs) > 0 {
		return errs
	}
	switch {
	case terminal(old):
		return validateUnchanged(req.Status, old.Status, "immutable after PodCertificateRequest is issued, denied, or failed")
	case hasCondition(req, certificatesv1.PodCertificateRequestConditionTypeDenied), hasCondition(req, certificatesv1.PodCertificateRequestConditionTypeFailed):
		want := certificatesv1.PodCertificateRequestStatus{Conditions: req.Status.Conditions}
		return validateUnchanged(req.Status, want, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case hasCondition(req, certificatesv1.PodCertificateRequestConditionTypeIssued):
		return validateIssued(req, old, now)
	}
	return validateUnchanged(req.Status, old.Status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// validateConditions allows one terminal condition at most, True, and no other.
func validateConditions(conditions []metav1.Condition) field.ErrorList {
	var errs field.ErrorList
	known := 0
	for i, c := range conditions {
		// Upstream's path names the index as a child: status.conditions.[0].type.
		path := field.NewPath("status", "conditions", "["+strconv.Itoa(i)+"]")
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			if known++; known > 1 {
				errs = append(errs, field.Invalid(path.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(path.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(path.Child("type"), c.Type, terminalTypes))
		}
	}
	return append(errs, metav1validation.ValidateConditions(conditions, field.NewPath("status", "conditions"))...)
}

func hasCondition(req *certificatesv1.PodCertificateRequest, conditionType string) bool {
	for _, c := range req.Status.Conditions {
		if c.Type == conditionType && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

func terminal(req *certificatesv1.PodCertificateRequest) bool {
	for _, t := range terminalTypes {
		if hasCondition(req, t) {
			return true
		}
	}
	return false
}

func validateUnchanged(status, want certificatesv1.PodCertificateRequestStatus, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(status, want) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("status"), field.OmitValueType{}, detail)}
}

// validateIssued checks an issuing status: a PEM chain of certificates
// whose leaf certifies the request's key for between an hour and
// spec.maxExpirationSeconds, starting within 5 minutes of now, and the
// leaf's times in notBefore, notAfter and a beginRefreshAt 10 minutes
// inside them.
func validateIssued(req, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chain := req.Status.CertificateChain
	if len(chain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, chain, maxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")
	}
	if leafBlock.Type != "CERTIFICATE" {
		return invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")
	}
	errs := validateLeafNames(leaf)
	wantKey, keyErrs := requestedKey(old)
	if keyErrs != nil {
		return append(errs, keyErrs...)
	}
	if !keyEqual(wantKey, leaf.PublicKey) {
		return append(errs, field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key"))
	}
	if errs = append(errs, requireTimes(req.Status)...); len(errs) > 0 {
		return errs
	}
	if errs := validateTimes(req, leaf, now); len(errs) > 0 {
		return errs
	}
	// The rest of the chain cannot be verified without its root; each
	// must be a certificate.
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return nil
		}
		if block.Type != "CERTIFICATE" {
			return invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks")
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509")
		}
	}
}

// validateLeafNames checks the leaf's DNS names and email addresses.
func validateLeafNames(leaf *x509.Certificate) field.ErrorList {
	var errs field.ErrorList
	for _, name := range leaf.DNSNames {
		if name == "" {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(name, "..") {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, address := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(address); err != nil {
			errs = append(errs, field.Invalid(certChainPath, address, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	return errs
}

// requestedKey is the key of the request's stub CSR (or, for a request of
// v1beta1 that has none, of its pkixPublicKey, which v1 cannot show).
func requestedKey(req *certificatesv1.PodCertificateRequest) (crypto.PublicKey, field.ErrorList) {
	if len(req.Spec.StubPKCS10Request) == 0 {
		return nil, field.ErrorList{field.Invalid(pkixPath, field.OmitValueType{}, "must be a valid PKIX-serialized public key")}
	}
	csr, err := x509.ParseCertificateRequest(req.Spec.StubPKCS10Request)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	return csr.PublicKey, nil
}

// keyEqual compares the keys of the three types upstream compares;
// another type is not compared.
func keyEqual(want, got crypto.PublicKey) bool {
	switch k := want.(type) {
	case ed25519.PublicKey:
		return k.Equal(got)
	case *rsa.PublicKey:
		return k.Equal(got)
	case *ecdsa.PublicKey:
		return k.Equal(got)
	}
	return true
}

// requireTimes requires notBefore, notAfter and beginRefreshAt.
func requireTimes(s certificatesv1.PodCertificateRequestStatus) field.ErrorList {
	var errs field.ErrorList
	if s.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if s.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if s.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	return errs
}

// validateTimes checks notBefore, notAfter and beginRefreshAt against the
// leaf, the clock and the spec's maximum lifetime.
func validateTimes(req *certificatesv1.PodCertificateRequest, leaf *x509.Certificate, now time.Time) field.ErrorList {
	s := req.Status
	notBefore, notAfter, beginRefresh := s.NotBefore.Time, s.NotAfter.Time, s.BeginRefreshAt.Time
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !notBefore.Equal(leaf.NotBefore):
		return invalid(notBeforePath, notBefore, "must be set to the NotBefore time encoded in the leaf certificate")
	case !(notBefore.After(now.Add(-5*time.Minute)) && notBefore.Before(now.Add(5*time.Minute))):
		return invalid(notBeforePath, notBefore, "must be set to within 5 minutes of kube-apiserver's current time")
	case !notAfter.Equal(leaf.NotAfter):
		return invalid(notAfterPath, notAfter, "must be set to the NotAfter time encoded in the leaf certificate")
	case lifetime < time.Hour:
		return invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")
	case req.Spec.MaxExpirationSeconds != nil && lifetime > time.Duration(*req.Spec.MaxExpirationSeconds)*time.Second:
		return invalid(certChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *req.Spec.MaxExpirationSeconds))
	case beginRefresh.Before(notBefore.Add(10 * time.Minute)):
		return invalid(beginRefreshPath, beginRefresh, "must be at least 10 minutes after status.notBefore")
	case beginRefresh.After(notAfter.Add(-10 * time.Minute)):
		return invalid(beginRefreshPath, beginRefresh, "must be at least 10 minutes before status.notAfter")
	}
	return nil
}

// invalid is the one error a check of the issued status ends with.
func invalid(path *field.Path, value any, detail string) field.ErrorList {
	return field.ErrorList{field.Invalid(path, value, detail)}
}
