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

package certificatesigningrequest

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LegacyUnknownSignerName is certificates.k8s.io/v1beta1's signer, which
// v1 refuses in a new request.
const LegacyUnknownSignerName = "kubernetes.io/legacy-unknown"

var (
	specPath       = field.NewPath("spec")
	conditionsPath = field.NewPath("status", "conditions")
	// validUsages are the usages upstream knows, sorted as its messages list them.
	validUsages = slices.Sorted(slices.Values([]string{
		string(certificatesv1.UsageSigning), string(certificatesv1.UsageDigitalSignature), string(certificatesv1.UsageContentCommitment),
		string(certificatesv1.UsageKeyEncipherment), string(certificatesv1.UsageKeyAgreement), string(certificatesv1.UsageDataEncipherment),
		string(certificatesv1.UsageCertSign), string(certificatesv1.UsageCRLSign), string(certificatesv1.UsageEncipherOnly),
		string(certificatesv1.UsageDecipherOnly), string(certificatesv1.UsageAny), string(certificatesv1.UsageServerAuth),
		string(certificatesv1.UsageClientAuth), string(certificatesv1.UsageCodeSigning), string(certificatesv1.UsageEmailProtection),
		string(certificatesv1.UsageSMIME), string(certificatesv1.UsageIPsecEndSystem), string(certificatesv1.UsageIPsecTunnel),
		string(certificatesv1.UsageIPsecUser), string(certificatesv1.UsageTimestamping), string(certificatesv1.UsageOCSPSigning),
		string(certificatesv1.UsageMicrosoftSGC), string(certificatesv1.UsageNetscapeSGC),
	}))
	// Approved, Denied and Failed conditions may only be True.
	trueOnly  = []string{string(corev1.ConditionTrue)}
	anyStatus = []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
)

// options are upstream's certificateValidationOptions, each an allowance:
// what an update path may set (the approval conditions, the certificate),
// and what an update tolerates because the stored request already has it
// (or, for the certificate, because the update leaves it as it was).
type options struct {
	settingApproval, settingCertificate bool
	bothApprovedAndDenied               bool
	legacySignerName                    bool
	duplicateConditionTypes             bool
	emptyConditionType                  bool
	arbitraryCertificate                bool
	unknownUsages, duplicateUsages      bool
}

// optionsFor is upstream's getValidationOptions: old is nil on create.
func optionsFor(csr, old *certificatesv1.CertificateSigningRequest) options {
	if old == nil {
		return options{}
	}
	seen := map[certificatesv1.RequestConditionType]bool{}
	var o options
	for _, c := range old.Status.Conditions {
		o.duplicateConditionTypes = o.duplicateConditionTypes || seen[c.Type]
		o.emptyConditionType = o.emptyConditionType || c.Type == ""
		seen[c.Type] = true
	}
	o.bothApprovedAndDenied = seen[certificatesv1.CertificateApproved] && seen[certificatesv1.CertificateDenied]
	o.legacySignerName = old.Spec.SignerName == LegacyUnknownSignerName
	o.arbitraryCertificate = bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || validateCertificate(old.Status.Certificate) != nil
	usages := map[certificatesv1.KeyUsage]bool{}
	for _, u := range old.Spec.Usages {
		o.unknownUsages = o.unknownUsages || !slices.Contains(validUsages, string(u))
		o.duplicateUsages = o.duplicateUsages || usages[u]
		usages[u] = true
	}
	return o
}

// validateCreate is upstream's ValidateCertificateSigningRequestCreate but
// for the metadata (any name will do, as upstream's
// ValidateCertificateRequestName has it).
func validateCreate(csr *certificatesv1.CertificateSigningRequest) field.ErrorList {
	return validate(csr, optionsFor(csr, nil))
}

// The update paths: the resource, its status and its approval.
const (
	mainPath = iota
	statusPath
	approvalPath
)

// validateUpdate is upstream's ValidateCertificateSigningRequestUpdate,
// ...StatusUpdate or ...ApprovalUpdate as path says, but for the
// metadata's rules (k8s.io/apiserver's rest.ValidateUpdate checks them),
// with the declarative rule 1.37 enforces (see declarative).
func validateUpdate(csr, old *certificatesv1.CertificateSigningRequest, path int) field.ErrorList {
	o := optionsFor(csr, old)
	o.settingCertificate = path == statusPath
	o.settingApproval = path == approvalPath
	errs := validate(csr, o)
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(conditionsOf(csr, t)) < len(conditionsOf(old, t)) {
			errs = append(errs, field.Forbidden(conditionsPath, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !o.settingApproval {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			conditions, oldConditions := conditionsOf(csr, t), conditionsOf(old, t)
			switch {
			case len(conditions) < len(oldConditions): // refused above
			case len(conditions) > len(oldConditions):
				errs = append(errs, field.Forbidden(conditionsPath, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !apiequality.Semantic.DeepEqual(oldConditions, conditions):
				errs = append(errs, field.Forbidden(conditionsPath, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, conditionDiff(oldConditions, conditions))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		if !o.settingCertificate {
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
		}
	}
	return declarative(errs, csr, old)
}

// validate is upstream's validateCertificateSigningRequest but for the metadata.
func validate(csr *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	var errs field.ErrorList
	if err := validateRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), csr.Spec.Request, fmt.Sprintf("%v", err)))
	}
	if len(csr.Spec.Usages) == 0 {
		errs = append(errs, field.Required(specPath.Child("usages"), ""))
	}
	if !o.unknownUsages {
		for i, usage := range csr.Spec.Usages {
			if !slices.Contains(validUsages, string(usage)) {
				errs = append(errs, field.NotSupported(specPath.Child("usages").Index(i), usage, validUsages))
			}
		}
	}
	if !o.duplicateUsages {
		seen := map[certificatesv1.KeyUsage]bool{}
		for i, usage := range csr.Spec.Usages {
			if seen[usage] {
				errs = append(errs, field.Duplicate(specPath.Child("usages").Index(i), usage))
			}
			seen[usage] = true
		}
	}
	if !o.legacySignerName && csr.Spec.SignerName == LegacyUnknownSignerName {
		errs = append(errs, field.Invalid(specPath.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, ValidateSignerName(specPath.Child("signerName"), csr.Spec.SignerName)...)
	}
	if csr.Spec.ExpirationSeconds != nil && *csr.Spec.ExpirationSeconds < 600 {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), *csr.Spec.ExpirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateConditions(csr.Status.Conditions, o)...)
	if !o.arbitraryCertificate {
		if err := validateCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// exclusiveDetail is the handwritten check of Approved against Denied,
// which 1.37's declarative rule replaces (see declarative).
const exclusiveDetail = "Approved and Denied conditions are mutually exclusive"

// validateConditions is upstream's validateConditions.
func validateConditions(conditions []certificatesv1.CertificateSigningRequestCondition, o options) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	approved, denied := false, false
	for i, c := range conditions {
		if !o.emptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(conditionsPath.Index(i).Child("type"), ""))
		}
		allowed := anyStatus
		switch c.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			allowed = trueOnly
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(conditionsPath.Index(i).Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			errs = append(errs, field.NotSupported(conditionsPath.Index(i).Child("status"), c.Status, allowed))
		}
		if !o.bothApprovedAndDenied {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				approved = true
				if denied {
					errs = append(errs, field.Invalid(conditionsPath, c.Type, exclusiveDetail).WithOrigin("zeroOrOneOf"))
				}
			case certificatesv1.CertificateDenied:
				denied = true
				if approved {
					errs = append(errs, field.Invalid(conditionsPath, c.Type, exclusiveDetail).WithOrigin("zeroOrOneOf"))
				}
			}
		}
		if !o.duplicateConditionTypes {
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(conditionsPath.Index(i).Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	return errs
}

// declarative applies 1.37's declarative rule on the v1 type, beta and
// enforced by default: Approved and Denied are a zero-or-one-of union of
// status.conditions, checked when the update changes which are there. Its
// error replaces the handwritten ones of the same rule, and comes last.
func declarative(errs field.ErrorList, csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	members := []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied}
	var names, set []string
	changed := false
	for _, t := range members {
		name := fmt.Sprintf("conditions[{%q: %q}]", "type", t)
		names = append(names, "`"+name+"`") // all members quoted, the set ones not
		has := len(conditionsOf(csr, t)) > 0
		changed = changed || has != (len(conditionsOf(old, t)) > 0)
		if has {
			set = append(set, name)
		}
	}
	if !changed || len(set) < 2 {
		return errs
	}
	errs = slices.DeleteFunc(errs, func(e *field.Error) bool { return e.Origin == "zeroOrOneOf" })
	return append(errs, field.Invalid(conditionsPath, fmt.Sprintf("{%s}", strings.Join(set, ", ")),
		fmt.Sprintf("must specify at most one of: %s", strings.Join(names, ", "))).WithOrigin("zeroOrOneOf"))
}

func conditionsOf(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// conditionDiff is upstream's diff of the conditions, which are its
// internal type's: their JSON has the Go field names.
func conditionDiff(old, conditions []certificatesv1.CertificateSigningRequestCondition) string {
	type internal struct {
		Type                               certificatesv1.RequestConditionType
		Status                             corev1.ConditionStatus
		Reason, Message                    string
		LastUpdateTime, LastTransitionTime metav1.Time
	}
	convert := func(in []certificatesv1.CertificateSigningRequestCondition) []internal {
		var out []internal
		for _, c := range in {
			out = append(out, internal{c.Type, c.Status, c.Reason, c.Message, c.LastUpdateTime, c.LastTransitionTime})
		}
		return out
	}
	return diff.Diff(convert(old), convert(conditions))
}

// ParseRequest decodes a PEM CERTIFICATE REQUEST, as upstream's ParseCSR.
func ParseRequest(pemBytes []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// validateRequest is upstream's validateCSR: a parseable request whose
// signature is valid.
func validateRequest(pemBytes []byte) error {
	csr, err := ParseRequest(pemBytes)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

// validateCertificate is upstream's: none, or CERTIFICATE PEM blocks
// without headers, each of parseable certificates.
func validateCertificate(pemData []byte) error {
	if len(pemData) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(pemData)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return fmt.Errorf("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return fmt.Errorf("found CERTIFICATE PEM block containing 0 certificates")
		}
		pemData = rest
	}
	if blocks == 0 {
		return fmt.Errorf("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}
