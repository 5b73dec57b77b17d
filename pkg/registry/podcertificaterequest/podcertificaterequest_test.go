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
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, newStorage(signers{}, nil), "podcertificaterequests")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: certificatesv1.Resource("podcertificaterequests"), Singular: "podcertificaterequest", Namespaced: true})
	if store.UpdateStrategy.AllowUnconditionalUpdate(t.Context()) {
		t.Errorf("AllowUnconditionalUpdate: got true, want false (upstream's)")
	}
	if store.CreateStrategy.(rest.RESTUpdateStrategy).AllowCreateOnUpdate(t.Context()) {
		t.Errorf("AllowCreateOnUpdate: got true, want false (upstream's)")
	}
	registrytest.CheckFields(t, store, request(t, newKey(t)), fields.Set{"metadata.name": "r1", "metadata.namespace": "default",
		"spec.signerName": signer, "spec.podName": "pod-1", "spec.nodeName": "node-1"})
	if _, err := NewStorage(nil, Config{}); err == nil || err.Error() != "podcertificaterequests: Config.Authorizer is required" {
		t.Errorf("NewStorage without an authorizer: got %v, want the field named", err)
	}
}

// The messages are upstream's ValidatePodCertificateRequestCreate's, as
// kube-apiserver 1.37 reports them.
func TestCreateMessages(t *testing.T) {
	key := newKey(t)
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = `PodCertificateRequest.certificates.k8s.io "r1" is invalid: `
	tests := []struct {
		name   string
		mutate func(*certificatesv1.PodCertificateRequest)
		want   string
	}{
		{name: "valid", mutate: func(*certificatesv1.PodCertificateRequest) {}},
		{name: "status is dropped", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Status.Conditions = []metav1.Condition{condition(certificatesv1.PodCertificateRequestConditionTypeDenied)}
		}},
		{name: "not a CSR", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = []byte("garbage") },
			want: prefix + `spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR`},
		{name: "a CSR with a bad signature", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.StubPKCS10Request[len(r.Spec.StubPKCS10Request)-1] ^= 0xff
		}, want: prefix + `spec.stubPKCS10Request: Invalid value: invalid signature`},
		{name: "a P-224 key", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stubRequest(t, p224) },
			want: prefix + `spec.stubPKCS10Request: Invalid value: "curve P-224": elliptic public keys must use curve P256, P384, or P521`},
		{name: "a 2048-bit RSA key", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = stubRequest(t, rsa2048) },
			want: prefix + `spec.stubPKCS10Request: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096`},
		{name: "no key", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = nil },
			want: prefix + `spec: Invalid value: exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set`},
		{name: "too long for a Kubernetes signer", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.SignerName, r.Spec.MaxExpirationSeconds = "kubernetes.io/kube-apiserver-client-pod", ptr.To[int32](86401)
		}, want: prefix + `spec.maxExpirationSeconds: Invalid value: 86401: must be in the range [3600, 86400]`},
		{name: "too short", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = ptr.To[int32](60) },
			want: prefix + `spec.maxExpirationSeconds: Invalid value: 60: must be in the range [3600, 7862400]`},
		{name: "identities missing", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.PodName, r.Spec.PodUID, r.Spec.NodeUID = "Pod_1", "", types.UID(strings.Repeat("u", 129))
		}, want: prefix + `[spec.podName: Invalid value: "Pod_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
			`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
			`spec.podUID: Invalid value: "": must not be empty, spec.nodeUID: Too long: may not be more than 128 bytes]`},
		{name: "a signer without a domain", mutate: func(r *certificatesv1.PodCertificateRequest) { r.Spec.SignerName = "signer" },
			want: prefix + `spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{name: "an annotation without a domain", mutate: func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.UnverifiedUserAnnotations = map[string]string{"key": "v"}
		}, want: prefix + `spec.unverifiedUserAnnotations: Invalid value: "key": must be a domain-prefixed key (such as "acme.io/foo")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storages := registrytest.Storages(t, newStorage(signers{}, nil), "podcertificaterequests", "podcertificaterequests", "podcertificaterequests/status")
			ctx := genericapirequest.WithNamespace(t.Context(), "default")
			req := request(t, key)
			tt.mutate(req)
			out, err := storages["podcertificaterequests"].(rest.Creater).Create(ctx, req, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if got := errString(err); got != tt.want {
				t.Fatalf("create: got\n%s\nwant\n%s", got, tt.want)
			}
			if err == nil {
				if diff := cmp.Diff(certificatesv1.PodCertificateRequestStatus{}, out.(*certificatesv1.PodCertificateRequest).Status); diff != "" {
					t.Errorf("created status (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestUpdate: the spec never changes; the metadata may; the status is
// the status subresource's.
func TestUpdate(t *testing.T) {
	key := newKey(t)
	const prefix = `PodCertificateRequest.certificates.k8s.io "r1" is invalid: spec: Invalid value: {"SignerName":"example.com/signer","PodName":"pod-2",` +
		`"PodUID":"pod-uid-1","ServiceAccountName":"sa-1","ServiceAccountUID":"sa-uid-1","NodeName":"node-1","NodeUID":"node-uid-1",` +
		`"MaxExpirationSeconds":86400,"PKIXPublicKey":null,"ProofOfPossession":null,"StubPKCS10Request":"`
	const suffix = `","UnverifiedUserAnnotations":null}: field is immutable`
	_, err := registrytest.UpdateSeeded(t, newStorage(signers{}, nil), "podcertificaterequests", false, request(t, key),
		func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodName = "pod-2" })
	if got := errString(err); !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, suffix) {
		t.Errorf("spec change: got\n%s\nwant\n%s<stub>%s", got, prefix, suffix)
	}
	got, err := registrytest.UpdateSeeded(t, newStorage(signers{}, nil), "podcertificaterequests", false, request(t, key), func(r *certificatesv1.PodCertificateRequest) {
		r.Labels = map[string]string{"a": "b"}
		r.Status.Conditions = []metav1.Condition{condition(certificatesv1.PodCertificateRequestConditionTypeDenied)}
	})
	if err != nil || got.Labels["a"] != "b" || len(got.Status.Conditions) != 0 {
		t.Errorf("labels and status: got %v, %v; want the labels changed and the status not", got, err)
	}
}

// TestTable: upstream's columns; State is the terminal condition, or Pending.
func TestTable(t *testing.T) {
	store := registrytest.REST(t, newStorage(signers{}, nil), "podcertificaterequests")
	req := request(t, newKey(t))
	req.Spec.UnverifiedUserAnnotations = map[string]string{"example.com/a": "b"}
	denied := req.DeepCopy()
	denied.Status.Conditions = []metav1.Condition{condition(certificatesv1.PodCertificateRequestConditionTypeDenied)}
	for _, tt := range []struct {
		req  *certificatesv1.PodCertificateRequest
		want []any
	}{
		{req, []any{"r1", "pod-1", "sa-1", "node-1", signer, "Pending", "example.com/a=b"}},
		{denied, []any{"r1", "pod-1", "sa-1", "node-1", signer, "Denied", "example.com/a=b"}},
	} {
		table := registrytest.TableOf(t, store, tt.req)
		if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
			t.Errorf("cells (-want +got):\n%s", diff)
		}
		want := []string{"Name", "PodName", "ServiceAccountName", "NodeName", "SignerName", "State", "UnverifiedUserAnnotations"}
		if diff := cmp.Diff(want, registrytest.ColumnNames(table)); diff != "" {
			t.Errorf("columns (-want +got):\n%s", diff)
		}
	}
}
