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

package csrsigning

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// checks are the signers signed here, each with what it requires of a
// request (upstream's getCSRVerificationFuncForSignerName): an error marks
// the request Failed.
var checks = map[string]func(request *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error{
	certificatesv1.KubeAPIServerClientSignerName: func(_ *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
		return apiServerClientUsages(usages)
	},
	certificatesv1.KubeAPIServerClientKubeletSignerName: kubeletClient,
	certificatesv1.KubeletServingSignerName:             kubeletServing,
}

// apiServerClientUsages is upstream's validAPIServerClientUsages: client
// auth, and perhaps digital signature and key encipherment.
func apiServerClientUsages(usages []certificatesv1.KeyUsage) error {
	hasClientAuth := false
	for _, u := range usages {
		switch u {
		case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment: // optional
		case certificatesv1.UsageClientAuth:
			hasClientAuth = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !hasClientAuth {
		return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
	}
	return nil
}

// Upstream's errors of the kubelet signers' checks.
var (
	errOrganizationNotSystemNodes = errors.New("subject organization is not system:nodes")
	errCommonNameNotSystemNode    = errors.New("subject common name does not begin with system:node:")
	errDNSOrIPSANRequired         = errors.New("DNS or IP subjectAltName is required")
	errDNSSANNotAllowed           = errors.New("DNS subjectAltNames are not allowed")
	errEmailSANNotAllowed         = errors.New("Email subjectAltNames are not allowed") // upstream's words
	errIPSANNotAllowed            = errors.New("IP subjectAltNames are not allowed")
	errURISANNotAllowed           = errors.New("URI subjectAltNames are not allowed")
)

// usagesAre reports whether usages, as a set, is one of sets.
func usagesAre(usages []certificatesv1.KeyUsage, sets ...[]certificatesv1.KeyUsage) bool {
	got := map[certificatesv1.KeyUsage]bool{}
	for _, u := range usages {
		got[u] = true
	}
	for _, set := range sets {
		if len(set) == len(got) && !slices.ContainsFunc(set, func(u certificatesv1.KeyUsage) bool { return !got[u] }) {
			return true
		}
	}
	return false
}

// usageList prints usages as upstream's sets.String's List does.
func usageList(usages []certificatesv1.KeyUsage) string {
	var s []string
	for _, u := range usages {
		s = append(s, string(u))
	}
	slices.Sort(s)
	return fmt.Sprint(s)
}

// kubeletServing is upstream's ValidateKubeletServingCSR.
func kubeletServing(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	required := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}
	requiredNoRSA := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	switch {
	case !slices.Equal([]string{"system:nodes"}, req.Subject.Organization):
		return errOrganizationNotSystemNodes
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errDNSOrIPSANRequired
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	case !usagesAre(usages, required, requiredNoRSA):
		return fmt.Errorf("usages did not match %v", usageList(required))
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errCommonNameNotSystemNode
	}
	return nil
}

// kubeletClient is upstream's ValidateKubeletClientCSR.
func kubeletClient(req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	required := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	requiredNoRSA := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	switch {
	case !slices.Equal([]string{"system:nodes"}, req.Subject.Organization):
		return errOrganizationNotSystemNodes
	case len(req.DNSNames) > 0:
		return errDNSSANNotAllowed
	case len(req.EmailAddresses) > 0:
		return errEmailSANNotAllowed
	case len(req.IPAddresses) > 0:
		return errIPSANNotAllowed
	case len(req.URIs) > 0:
		return errURISANNotAllowed
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errCommonNameNotSystemNode
	case !usagesAre(usages, required, requiredNoRSA):
		return fmt.Errorf("usages did not match %v", usageList(required))
	}
	return nil
}
