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
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

const signer = "example.com/signer"

// signers allows the sign verb on the signers it names, and nothing else.
type signers map[string]bool

func (s signers) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetVerb() == "sign" && a.GetResource() == "signers" && a.GetAPIGroup() == certificatesv1.GroupName && s[a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "not allowed", nil
}

// newStorage is NewStorage with authz and clk (nil: the real clock).
func newStorage(authz authorizer.UnconditionalAuthorizer, clk clock.PassiveClock) func(generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return func(g generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
		return NewStorage(g, Config{Authorizer: authz, Clock: clk})
	}
}

// stubRequest returns a DER certificate request signed by key.
func stubRequest(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func newKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// request returns a valid request of pod-1 in default, for signer, with key's stub request.
func request(t testing.TB, key crypto.Signer) *certificatesv1.PodCertificateRequest {
	t.Helper()
	return &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "default"},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: signer, PodName: "pod-1", PodUID: "pod-uid-1", ServiceAccountName: "sa-1", ServiceAccountUID: "sa-uid-1",
			NodeName: "node-1", NodeUID: "node-uid-1", MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: stubRequest(t, key),
		},
	}
}

// certificate returns a PEM certificate of key's public key, valid from
// notBefore for lifetime, self-signed by key.
func certificate(t testing.TB, key crypto.Signer, notBefore time.Time, lifetime time.Duration) string {
	t.Helper()
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pod"}, NotBefore: notBefore, NotAfter: notBefore.Add(lifetime)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// condition is a True condition of type t.
func condition(t string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "Because", Message: "why", LastTransitionTime: metav1.Now()}
}

// issued is a status issuing certificate, valid from notBefore for
// lifetime, refreshed from halfway.
func issued(chain string, notBefore time.Time, lifetime time.Duration) certificatesv1.PodCertificateRequestStatus {
	return certificatesv1.PodCertificateRequestStatus{
		Conditions:       []metav1.Condition{condition(certificatesv1.PodCertificateRequestConditionTypeIssued)},
		CertificateChain: chain,
		NotBefore:        ptr.To(metav1.NewTime(notBefore)),
		NotAfter:         ptr.To(metav1.NewTime(notBefore.Add(lifetime))),
		BeginRefreshAt:   ptr.To(metav1.NewTime(notBefore.Add(lifetime / 2))),
	}
}

// errString is err's message, or "" for none.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
