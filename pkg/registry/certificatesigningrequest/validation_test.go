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
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

func validCSR(t testing.TB) *certificatesv1.CertificateSigningRequest {
	request, _ := pkitest.Request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob", Organization: []string{"dev"}}})
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}},
	}
}

func modified(csr *certificatesv1.CertificateSigningRequest, mutate func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
	csr = csr.DeepCopy()
	mutate(csr)
	return csr
}

var stamp = metav1.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func condition(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue, Reason: "R", LastUpdateTime: stamp, LastTransitionTime: stamp}
}

// requestContext is a cluster-scoped request of alice's to subresource.
func requestContext(subresource string) context.Context {
	ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "alice", UID: "u1", Groups: []string{"dev", "system:authenticated"}, Extra: map[string][]string{"k": {"v"}}})
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, APIGroup: "certificates.k8s.io", APIVersion: "v1",
		Resource: "certificatesigningrequests", Subresource: subresource, Verb: "update"})
}

// The messages are kube-apiserver 1.37.2's for the same requests (its
// strategies run through k8s.io/apiserver's rest.BeforeCreate).
func TestCreateMessages(t *testing.T) {
	const invalid = `CertificateSigningRequest.certificates.k8s.io "csr-1" is invalid: `
	tests := []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		want   string
	}{
		{name: "valid", mutate: func(*certificatesv1.CertificateSigningRequest) {}},
		{name: "any name", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Name = "Any_Name:ok" }},
		{name: "a name with a slash", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Name = "a/b" },
			want: `CertificateSigningRequest.certificates.k8s.io "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'`},
		{name: "not PEM", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("not a csr") },
			want: invalid + `spec.request: Invalid value: "bm90IGEgY3Ny": PEM block type must be CERTIFICATE REQUEST`},
		{name: "no usages", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil }, want: invalid + `spec.usages: Required value`},
		{name: "unknown and duplicate usages", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"bogus", "client auth", "client auth"}
		}, want: invalid + `[spec.usages[0]: Unsupported value: "bogus": supported values: "any", "cert sign", "client auth", "code signing", ` +
			`"content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", ` +
			`"ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", ` +
			`"s/mime", "server auth", "signing", "timestamping", spec.usages[2]: Duplicate value: "client auth"]`},
		{name: "no signer", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }, want: invalid + `spec.signerName: Required value`},
		{name: "signer without a path", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" },
			want: invalid + `spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`},
		{name: "signer of one label", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" },
			want: invalid + `spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots`},
		{name: "signer with bad labels", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "Example.com/Bad_Path" },
			want: invalid + `[spec.signerName: Invalid value: "Example.com": validating label "Example": a lowercase RFC 1123 label must consist of lower case ` +
				`alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for ` +
				`validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.signerName: Invalid value: "Bad_Path": validating label "Bad_Path": a lowercase ` +
				`RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric ` +
				`character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`},
		{name: "legacy signer", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = LegacyUnknownSignerName },
			want: invalid + `spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version`},
		{name: "under ten minutes", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To[int32](599) },
			want: invalid + `spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)`},
		{name: "status is cleared, not checked", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{condition("Approved"), condition("Denied")}
			c.Status.Certificate = []byte("not pem")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storages := registrytest.Storages(t, NewStorage, "certificatesigningrequests", "certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status")
			_, err := storages["certificatesigningrequests"].(rest.Creater).Create(requestContext(""), modified(validCSR(t), tt.mutate), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if got := errorString(err); got != tt.want {
				t.Errorf("create: got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestUpdateMessages updates a stored request through each endpoint; the
// messages are kube-apiserver 1.37.2's for the same updates.
func TestUpdateMessages(t *testing.T) {
	const invalid = `CertificateSigningRequest.certificates.k8s.io "csr-1" is invalid: `
	const both = `status.conditions: Invalid value: "{conditions[{\"type\": \"Approved\"}], conditions[{\"type\": \"Denied\"}]}": ` +
		"must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`"
	conditions := func(types ...certificatesv1.RequestConditionType) func(*certificatesv1.CertificateSigningRequest) {
		return func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = nil
			for _, t := range types {
				c.Status.Conditions = append(c.Status.Conditions, condition(t))
			}
		}
	}
	approved := conditions(certificatesv1.CertificateApproved)
	signed := func(c *certificatesv1.CertificateSigningRequest) {
		approved(c)
		c.Status.Certificate, _ = pkitest.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "x"}})
	}
	tests := []struct {
		name        string
		subresource string
		stored      func(*certificatesv1.CertificateSigningRequest)
		update      func(*certificatesv1.CertificateSigningRequest)
		want        string
	}{
		{name: "approve", subresource: "approval", stored: conditions(), update: approved},
		{name: "deny an approved request", subresource: "approval", stored: approved, update: conditions("Approved", "Denied"), want: invalid + both},
		{name: "approve and deny at once", subresource: "approval", stored: conditions(), update: conditions("Denied", "Approved"), want: invalid + both},
		{name: "take back an approval", subresource: "approval", stored: approved, update: conditions(),
			want: invalid + `status.conditions: Forbidden: updates may not remove a condition of type "Approved"`},
		{name: "approval sets no certificate", subresource: "approval", stored: approved, update: signed},
		{name: "approval False", subresource: "approval", stored: conditions(), update: func(c *certificatesv1.CertificateSigningRequest) {
			approved(c)
			c.Status.Conditions[0].Status = corev1.ConditionFalse
		}, want: invalid + `status.conditions[0].status: Unsupported value: "False": supported values: "True"`},
		{name: "sign", subresource: "status", stored: approved, update: signed},
		{name: "a certificate that is no PEM", subresource: "status", stored: approved, update: func(c *certificatesv1.CertificateSigningRequest) {
			approved(c)
			c.Status.Certificate = []byte("not pem")
		}, want: invalid + `status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block`},
		{name: "a certificate request for a certificate", subresource: "status", stored: approved, update: func(c *certificatesv1.CertificateSigningRequest) {
			approved(c)
			c.Status.Certificate = c.Spec.Request
		}, want: invalid + `status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"`},
		{name: "sign again", subresource: "status", stored: signed, update: signed,
			want: invalid + `status.certificate: Forbidden: updates may not modify existing certificate content`},
		{name: "approve through status", subresource: "status", stored: conditions(), update: approved,
			want: invalid + `status.conditions: Forbidden: updates may not add a condition of type "Approved"`},
		{name: "deny through status", subresource: "status", stored: approved, update: conditions("Approved", "Denied"),
			want: invalid + `[status.conditions: Forbidden: updates may not add a condition of type "Denied", ` + both + `]`},
		{name: "Failed False", subresource: "status", stored: approved, update: func(c *certificatesv1.CertificateSigningRequest) {
			conditions("Approved", "Failed")(c)
			c.Status.Conditions[1].Status = corev1.ConditionFalse
		}, want: invalid + `status.conditions[1].status: Unsupported value: "False": supported values: "True"`},
		{name: "duplicate and empty conditions", subresource: "status", stored: approved, update: func(c *certificatesv1.CertificateSigningRequest) {
			conditions("Approved", "Custom", "Custom")(c)
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{})
		}, want: invalid + `[status.conditions[2].type: Duplicate value: "Custom", status.conditions[3].type: Required value, status.conditions[3].status: Required value]`},
		{name: "drop the approval through status", subresource: "status", stored: approved, update: conditions(),
			want: invalid + `status.conditions: Forbidden: updates may not remove a condition of type "Approved"`},
		{name: "the resource keeps its status", stored: approved, update: signed},
		{name: "the resource keeps its spec", stored: conditions(), update: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com/x" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := registrytest.NewMemStorage()
			storages, err := NewStorage(mem.Options("certificatesigningrequests"))
			if err != nil {
				t.Fatal(err)
			}
			ctx := requestContext(tt.subresource)
			key, err := storages["certificatesigningrequests"].(*registry.REST).KeyFunc(ctx, "csr-1")
			if err != nil {
				t.Fatal(err)
			}
			stored := mem.Seed(t, key, modified(validCSR(t), tt.stored)).(*certificatesv1.CertificateSigningRequest)
			resource := "certificatesigningrequests"
			if tt.subresource != "" {
				resource += "/" + tt.subresource
			}
			_, _, err = storages[resource].(rest.Updater).Update(ctx, "csr-1", rest.DefaultUpdatedObjectInfo(modified(stored, tt.update)),
				rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
			if got := errorString(err); got != tt.want {
				t.Errorf("update: got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestModifiedConditionMessage: the diff upstream shows is of its internal
// type, whose JSON has the Go field names.
func TestModifiedConditionMessage(t *testing.T) {
	old := modified(validCSR(t), func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{condition(certificatesv1.CertificateApproved)}
	})
	csr := modified(old, func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions[0].Reason = "Other"
		c.Status.Conditions[0].LastTransitionTime = metav1.Time{}
	})
	want := `status.conditions: Forbidden: updates may not modify a condition of type "Approved"
@@ -2,9 +2,9 @@
  {
   "Type": "Approved",
   "Status": "True",
-  "Reason": "R",
+  "Reason": "Other",
   "Message": "",
   "LastUpdateTime": "2026-01-02T03:04:05Z",
-  "LastTransitionTime": "2026-01-02T03:04:05Z"
+  "LastTransitionTime": null
  }
 ]
`
	if got := validateUpdate(csr, old, mainPath).ToAggregate().Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
