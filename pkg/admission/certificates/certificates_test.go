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

package certificates

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// allow is an authorizer that allows bob verb on the signers it names, as "verb name".
func allow(grants ...string) authorizer.AuthorizerFunc {
	return func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "bob" && a.GetAPIGroup() == "certificates.k8s.io" && a.GetResource() == "signers" &&
			a.IsResourceRequest() && slices.Contains(grants, a.GetVerb()+" "+a.GetName()) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	}
}

// requestPEM is a certificate request (PEM) of bob in orgs.
func requestPEM(t *testing.T, orgs ...string) []byte {
	t.Helper()
	request, _ := pkitest.Request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "bob", Organization: orgs}})
	return request
}

func csr(signer string, request []byte, mutate ...func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer, Request: request}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func attributes(obj, old runtime.Object, resource, subresource string, op admission.Operation) admission.Attributes {
	name := obj.(metav1.Object).GetName()
	return admission.NewAttributesRecord(obj, old, certificatesv1.SchemeGroupVersion.WithKind("X"), "", name,
		certificatesv1.SchemeGroupVersion.WithResource(resource), subresource, op, nil, false, &user.DefaultInfo{Name: "bob"})
}

func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The messages are upstream's plugins'.
func TestPlugins(t *testing.T) {
	const signer = certificatesv1.KubeAPIServerClientSignerName
	request := requestPEM(t, "dev")
	approved := func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	}
	signed := func(c *certificatesv1.CertificateSigningRequest) { approved(c); c.Status.Certificate = []byte("cert") }
	bundle := func(signer string, finalizers ...string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "b", Finalizers: finalizers}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: "x"}}
	}
	tests := []struct {
		name   string
		plugin *Plugin
		grants []string
		attrs  admission.Attributes
		want   string
	}{
		{name: "approve without the verb", plugin: NewApproval(), attrs: attributes(csr(signer, request, approved), csr(signer, request), "certificatesigningrequests", "approval", admission.Update),
			want: `certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{name: "approve with the verb on the signer", plugin: NewApproval(), grants: []string{"approve " + signer},
			attrs: attributes(csr(signer, request, approved), csr(signer, request), "certificatesigningrequests", "approval", admission.Update)},
		{name: "approve with the verb on the signer's domain", plugin: NewApproval(), grants: []string{"approve kubernetes.io/*"},
			attrs: attributes(csr(signer, request, approved), csr(signer, request), "certificatesigningrequests", "approval", admission.Update)},
		{name: "the stored signer decides", plugin: NewApproval(), grants: []string{"approve example.com/mine"},
			attrs: attributes(csr("example.com/mine", request, approved), csr(signer, request), "certificatesigningrequests", "approval", admission.Update),
			want:  `certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{name: "approval ignores the status subresource", plugin: NewApproval(),
			attrs: attributes(csr(signer, request, approved), csr(signer, request), "certificatesigningrequests", "status", admission.Update)},
		{name: "sign without the verb", plugin: NewSigning(), grants: []string{"approve " + signer},
			attrs: attributes(csr(signer, request, signed), csr(signer, request, approved), "certificatesigningrequests", "status", admission.Update),
			want:  `certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: user not permitted to sign requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{name: "sign with the verb", plugin: NewSigning(), grants: []string{"sign " + signer},
			attrs: attributes(csr(signer, request, signed), csr(signer, request, approved), "certificatesigningrequests", "status", admission.Update)},
		{name: "a status update that changes nothing", plugin: NewSigning(),
			attrs: attributes(csr(signer, request, approved), csr(signer, request, approved), "certificatesigningrequests", "status", admission.Update)},
		{name: "attest without the verb", plugin: NewAttest(), attrs: attributes(bundle("example.com/s"), nil, "clustertrustbundles", "", admission.Create),
			want: `clustertrustbundles.certificates.k8s.io "b" is forbidden: user not permitted to attest for signerName "example.com/s"`},
		{name: "attest with the verb", plugin: NewAttest(), grants: []string{"attest example.com/s"},
			attrs: attributes(bundle("example.com/s"), nil, "clustertrustbundles", "", admission.Create)},
		{name: "a bundle of no signer", plugin: NewAttest(), attrs: attributes(bundle(""), nil, "clustertrustbundles", "", admission.Create)},
		{name: "the garbage collector's update", plugin: NewAttest(),
			attrs: attributes(bundle("example.com/s", "f"), bundle("example.com/s"), "clustertrustbundles", "", admission.Update)},
		{name: "system:masters", plugin: NewSubjectRestriction(),
			attrs: attributes(csr(signer, requestPEM(t, "dev", "system:masters")), nil, "certificatesigningrequests", "", admission.Create),
			want:  `certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`},
		{name: "system:masters of another signer", plugin: NewSubjectRestriction(),
			attrs: attributes(csr("example.com/s", requestPEM(t, "system:masters")), nil, "certificatesigningrequests", "", admission.Create)},
		{name: "not a request", plugin: NewSubjectRestriction(),
			attrs: attributes(csr(signer, []byte("x")), nil, "certificatesigningrequests", "", admission.Create),
			want:  `certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.plugin.SetUnconditionalAuthorizer(allow(tt.grants...))
			if !tt.plugin.Handles(tt.attrs.GetOperation()) {
				t.Fatalf("Handles(%s): got false, want true", tt.attrs.GetOperation())
			}
			if got := errorString(tt.plugin.Validate(t.Context(), tt.attrs, nil)); got != tt.want {
				t.Errorf("Validate: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRegister(t *testing.T) {
	plugins := admission.NewPlugins()
	Register(plugins)
	if diff := cmp.Diff(slices.Sorted(slices.Values(PluginNames)), plugins.Registered()); diff != "" {
		t.Errorf("registered (-want +got):\n%s", diff)
	}
	for _, name := range PluginNames {
		p, err := plugins.InitPlugin(name, nil, admission.PluginInitializers{})
		wantErr := name != SubjectRestrictionPluginName
		if got := err != nil; got != wantErr {
			t.Errorf("%s without an authorizer: got error %v, want an error %v", name, err, wantErr)
		}
		if err == nil && p == nil {
			t.Errorf("%s: got no plugin", name)
		}
	}
}
