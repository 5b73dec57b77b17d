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
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "certificatesigningrequests",
		"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status")
	store := storages["certificatesigningrequests"].(*registry.REST)
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: certificatesv1.Resource("certificatesigningrequests"),
		Singular: "certificatesigningrequest", ShortNames: []string{"csr"}})
	// As upstream's strategies reset them.
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	for resource, want := range map[string][]string{
		"certificatesigningrequests":          {"spec", "status"},
		"certificatesigningrequests/status":   {"spec", "status.conditions"},
		"certificatesigningrequests/approval": {"spec", "status.certificate"},
	} {
		got := storages[resource].(rest.ResetFieldsStrategy).GetResetFields()
		if diff := cmp.Diff(registry.Fieldpaths("certificates.k8s.io/v1", want...), got, equal); diff != "" {
			t.Errorf("%s reset fields (-want +got):\n%s", resource, diff)
		}
	}
	// Upstream's approval subresource has no table of its own.
	if _, ok := storages["certificatesigningrequests/approval"].(rest.TableConvertor); ok {
		t.Errorf("the approval subresource converts to a table, want k8s.io/apiserver's default")
	}
	if !store.UpdateStrategy.AllowUnconditionalUpdate(t.Context()) || store.UpdateStrategy.AllowCreateOnUpdate(t.Context()) {
		t.Errorf("updates: want unconditional ones allowed, and no create")
	}
}

// TestCreateRecordsRequestor: the requestor is the user who creates, not
// what the request says, and a request is created neither approved nor
// signed.
func TestCreateRecordsRequestor(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "certificatesigningrequests",
		"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status")
	csr := modified(validCSR(t), func(c *certificatesv1.CertificateSigningRequest) {
		c.Spec.Username, c.Spec.UID, c.Spec.Groups = "mallory", "m", []string{"system:masters"}
		c.Spec.Extra = map[string]certificatesv1.ExtraValue{"x": {"y"}}
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{condition(certificatesv1.CertificateApproved)}
		c.Status.Certificate, _ = pkitest.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "x"}})
	})
	out, err := storages["certificatesigningrequests"].(rest.Creater).Create(requestContext(""), csr, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*certificatesv1.CertificateSigningRequest)
	wantSpec := csr.Spec
	wantSpec.Username, wantSpec.UID, wantSpec.Groups = "alice", "u1", []string{"dev", "system:authenticated"}
	wantSpec.Extra = map[string]certificatesv1.ExtraValue{"k": {"v"}}
	if diff := cmp.Diff(wantSpec, got.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if status, _ := json.Marshal(got.Status); string(status) != `{}` {
		t.Errorf("status: got %s, want {}", status)
	}
}

// TestApprovalStampsConditions: an approval's condition gets its times,
// and keeps a transition time of a condition of the same type and status.
func TestApprovalStampsConditions(t *testing.T) {
	_, _, approval := strategies()
	old := modified(validCSR(t), func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{condition("Custom")}
	})
	csr := modified(old, func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: "Custom", Status: "True"}, {Type: "Approved", Status: "True"}}
		c.Spec.SignerName = "example.com/other"
		c.Status.Certificate = []byte("x")
	})
	before := metav1.Now().Rfc3339Copy()
	approval.PrepareForUpdate(t.Context(), csr, old)
	if csr.Spec.SignerName != old.Spec.SignerName || csr.Status.Certificate != nil {
		t.Errorf("spec and certificate: got %q and %q, want the stored ones", csr.Spec.SignerName, csr.Status.Certificate)
	}
	custom, approved := csr.Status.Conditions[0], csr.Status.Conditions[1]
	if !custom.LastTransitionTime.Equal(&stamp) || custom.LastUpdateTime.Before(&before) {
		t.Errorf("Custom: got transition %v and update %v, want %v and now", custom.LastTransitionTime, custom.LastUpdateTime, stamp)
	}
	if approved.LastTransitionTime.Before(&before) || !approved.LastUpdateTime.Equal(&approved.LastTransitionTime) {
		t.Errorf("Approved: got transition %v and update %v, want now for both", approved.LastTransitionTime, approved.LastUpdateTime)
	}
}

// TestStatusKeepsApproval: the status subresource leaves Approved and
// Denied conditions as they were, and the spec.
func TestStatusKeepsApproval(t *testing.T) {
	_, status, _ := strategies()
	old := modified(validCSR(t), func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{condition(certificatesv1.CertificateApproved)}
	})
	csr := modified(old, func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions[0].Reason = "Changed"
		c.Status.Certificate = []byte("cert")
		c.Spec.Usages = nil
	})
	status.PrepareForUpdate(t.Context(), csr, old)
	if diff := cmp.Diff(old.Status.Conditions, csr.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if string(csr.Status.Certificate) != "cert" || len(csr.Spec.Usages) != 2 {
		t.Errorf("got certificate %q and usages %v, want the new certificate and the stored usages", csr.Status.Certificate, csr.Spec.Usages)
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "certificatesigningrequests")
	registrytest.CheckFields(t, store, validCSR(t), fields.Set{"metadata.name": "csr-1", "spec.signerName": certificatesv1.KubeAPIServerClientSignerName})
}

// TestTable: upstream's columns and cells (NAME AGE SIGNERNAME REQUESTOR
// REQUESTEDDURATION CONDITION), checked against its printer's.
func TestTable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "certificatesigningrequests")
	conditions := func(types ...certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
		var out []certificatesv1.CertificateSigningRequestCondition
		for _, t := range types {
			out = append(out, condition(t))
		}
		return out
	}
	tests := []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		want   []any
	}{
		{name: "pending", mutate: func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Username = "alice" },
			want: []any{"csr-1", "<unknown>", "kubernetes.io/kube-apiserver-client", "alice", "<none>", "Pending"}},
		{name: "approved and issued, a day asked for", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.ExpirationSeconds = ptr.To[int32](86400)
			c.Status.Conditions = conditions("Approved")
			c.Status.Certificate = []byte("x")
		}, want: []any{"csr-1", "<unknown>", "kubernetes.io/kube-apiserver-client", "", "24h", "Approved,Issued"}},
		{name: "denied before approved, and failed", mutate: func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = ""
			c.Status.Conditions = conditions("Approved", "Denied", "Failed")
		}, want: []any{"csr-1", "<unknown>", "<none>", "", "<none>", "Denied,Failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(t.Context(), modified(validCSR(t), tt.mutate), nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
	table, err := store.ConvertToTable(t.Context(), validCSR(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"}, registrytest.ColumnNames(table)); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if got, want := table.ColumnDefinitions[3].Description, "Base64-encoded PKCS#10 CSR data"; got != want {
		t.Errorf("Requestor's description: got %q, want upstream's %q", got, want)
	}
}
