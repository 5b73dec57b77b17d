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
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// authority signs requests as kube-controller-manager's signer does (its
// authority.CertificateAuthority with the PermissiveSigningPolicy).
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
	// maxTTL is the longest a certificate is valid (--cluster-signing-duration).
	maxTTL time.Duration
}

// The policy's constants, upstream's.
const (
	// backdate is how far before now a certificate is valid from; it is
	// less than the shortest duration a request may ask for.
	backdate = 5 * time.Minute
	// short is the duration under which a certificate's end is not
	// backdated too.
	short = 8 * time.Hour
	// minTTL is the shortest certificate signed, whatever is asked.
	minTTL = 10 * time.Minute
)

// duration is how long a certificate asked for expirationSeconds is
// valid: as asked, within [minTTL, maxTTL]; maxTTL if not asked.
func (a *authority) duration(expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return a.maxTTL
	}
	switch requested := time.Duration(*expirationSeconds) * time.Second; {
	case requested > a.maxTTL:
		return a.maxTTL
	case requested < minTTL:
		return minTTL
	default:
		return requested
	}
}

var serialNumberLimit = new(big.Int).Lsh(big.NewInt(1), 128)

// sign returns the PEM certificate of request for usages, valid for ttl
// from now: the request's subject and SANs, its public key, no
// extensions of its own, not a CA's, and never past the CA's end.
func (a *authority) sign(request *x509.CertificateRequest, usages []certificatesv1.KeyUsage, ttl time.Duration, now time.Time) ([]byte, error) {
	if err := request.CheckSignature(); err != nil {
		return nil, fmt.Errorf("unable to verify certificate request signature: %v", err)
	}
	serial, err := rand.Int(rand.Reader, serialNumberLimit)
	if err != nil {
		return nil, fmt.Errorf("unable to generate a serial number for %s: %v", request.Subject.CommonName, err)
	}
	keyUsage, extKeyUsages, err := keyUsages(usages)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               request.Subject,
		DNSNames:              request.DNSNames,
		IPAddresses:           request.IPAddresses,
		EmailAddresses:        request.EmailAddresses,
		URIs:                  request.URIs,
		PublicKeyAlgorithm:    request.PublicKeyAlgorithm,
		PublicKey:             request.PublicKey,
		KeyUsage:              keyUsage,
		ExtKeyUsage:           extKeyUsages,
		BasicConstraintsValid: true,
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(ttl - backdate),
	}
	if ttl < short {
		tmpl.NotAfter = now.Add(ttl)
	}
	caEnd := a.cert.NotAfter
	if !tmpl.NotAfter.Before(caEnd) {
		tmpl.NotAfter = caEnd
	}
	if !tmpl.NotBefore.Before(caEnd) {
		return nil, fmt.Errorf("the signer has expired: NotAfter=%v", caEnd)
	}
	if !now.Before(caEnd) {
		return nil, fmt.Errorf("refusing to sign a certificate that expired in the past: NotAfter=%v", caEnd)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, request.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("failed to sign certificate: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

var keyUsageOf = map[certificatesv1.KeyUsage]x509.KeyUsage{
	certificatesv1.UsageSigning:           x509.KeyUsageDigitalSignature,
	certificatesv1.UsageDigitalSignature:  x509.KeyUsageDigitalSignature,
	certificatesv1.UsageContentCommitment: x509.KeyUsageContentCommitment,
	certificatesv1.UsageKeyEncipherment:   x509.KeyUsageKeyEncipherment,
	certificatesv1.UsageKeyAgreement:      x509.KeyUsageKeyAgreement,
	certificatesv1.UsageDataEncipherment:  x509.KeyUsageDataEncipherment,
	certificatesv1.UsageCertSign:          x509.KeyUsageCertSign,
	certificatesv1.UsageCRLSign:           x509.KeyUsageCRLSign,
	certificatesv1.UsageEncipherOnly:      x509.KeyUsageEncipherOnly,
	certificatesv1.UsageDecipherOnly:      x509.KeyUsageDecipherOnly,
}

var extKeyUsageOf = map[certificatesv1.KeyUsage]x509.ExtKeyUsage{
	certificatesv1.UsageAny:             x509.ExtKeyUsageAny,
	certificatesv1.UsageServerAuth:      x509.ExtKeyUsageServerAuth,
	certificatesv1.UsageClientAuth:      x509.ExtKeyUsageClientAuth,
	certificatesv1.UsageCodeSigning:     x509.ExtKeyUsageCodeSigning,
	certificatesv1.UsageEmailProtection: x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageSMIME:           x509.ExtKeyUsageEmailProtection,
	certificatesv1.UsageIPsecEndSystem:  x509.ExtKeyUsageIPSECEndSystem,
	certificatesv1.UsageIPsecTunnel:     x509.ExtKeyUsageIPSECTunnel,
	certificatesv1.UsageIPsecUser:       x509.ExtKeyUsageIPSECUser,
	certificatesv1.UsageTimestamping:    x509.ExtKeyUsageTimeStamping,
	certificatesv1.UsageOCSPSigning:     x509.ExtKeyUsageOCSPSigning,
	certificatesv1.UsageMicrosoftSGC:    x509.ExtKeyUsageMicrosoftServerGatedCrypto,
	certificatesv1.UsageNetscapeSGC:     x509.ExtKeyUsageNetscapeServerGatedCrypto,
}

// keyUsages is upstream's keyUsagesFromStrings: the key usages and the
// extended ones (each once, sorted) of usages.
func keyUsages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var keyUsage x509.KeyUsage
	var ext []x509.ExtKeyUsage
	var unrecognized []certificatesv1.KeyUsage
	for _, u := range usages {
		if v, ok := keyUsageOf[u]; ok {
			keyUsage |= v
		} else if v, ok := extKeyUsageOf[u]; ok {
			if !slices.Contains(ext, v) {
				ext = append(ext, v)
			}
		} else {
			unrecognized = append(unrecognized, u)
		}
	}
	if len(unrecognized) > 0 {
		return 0, nil, fmt.Errorf("unrecognized usage values: %q", unrecognized)
	}
	slices.Sort(ext)
	return keyUsage, ext, nil
}
