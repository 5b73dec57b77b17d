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
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/controllers"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

const clientSigner = certificatesv1.KubeAPIServerClientSignerName

// newRequest returns a PEM certificate request for user cn in groups orgs,
// and its key (PEM).
func newRequest(t *testing.T, cn string, orgs ...string) (request, key []byte) {
	t.Helper()
	return pkitest.Request(t, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}})
}

// createCSR creates request name of the client signer, as client.
func createCSR(t *testing.T, client kubernetes.Interface, name string, request []byte) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	csr, err := client.CertificatesV1().CertificateSigningRequests().Create(t.Context(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: clientSigner, ExpirationSeconds: ptr.To[int32](3600),
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return csr
}

// signed waits until request name has a certificate, and returns it.
func signed(t *testing.T, client kubernetes.Interface, name string) []byte {
	t.Helper()
	var cert []byte
	framework.WaitUntil(t, func() bool {
		csr, err := client.CertificatesV1().CertificateSigningRequests().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cert = csr.Status.Certificate
		return len(cert) > 0
	}, name+"'s certificate")
	return cert
}

// TestApprovedRequestIsSigned: a request created with client-go records
// its requestor, kubectl certificate approve approves it, the server
// signs it, and its certificate authenticates as the request's subject;
// kubectl get csr shows upstream's columns all along.
func TestApprovedRequestIsSigned(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	request, key := newRequest(t, "carol", "dev", "qa")
	csr := createCSR(t, client, "carol", request)
	if csr.Spec.Username != "admin" || !slices.Contains(csr.Spec.Groups, "system:masters") {
		t.Errorf("requestor: got %q in %v, want admin in system:masters (the creating user)", csr.Spec.Username, csr.Spec.Groups)
	}
	checkTable(t, s, "carol", "Pending")
	if got, want := framework.Kubectl(t, s, "", "certificate", "approve", "carol"), "certificatesigningrequest.certificates.k8s.io/carol approved\n"; got != want {
		t.Errorf("kubectl certificate approve: got %q, want %q", got, want)
	}
	certPEM := signed(t, client, "carol")
	checkTable(t, s, "carol", "Approved,Issued")

	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if got := cert.NotAfter.Sub(cert.NotBefore); got != time.Hour+5*time.Minute {
		t.Errorf("validity: got %v, want the hour asked for (and 5 minutes backdated)", got)
	}
	carol := &rest.Config{Host: s.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: s.Config.CAData, CertData: certPEM, KeyData: key}}
	review, err := kubernetes.NewForConfigOrDie(carol).AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a SelfSubjectReview with the certificate: %v", err)
	}
	// The request's organizations are a DER SET: in the order of their encodings.
	if u := review.Status.UserInfo; u.Username != "carol" || !slices.Equal(u.Groups, []string{"qa", "dev", "system:authenticated"}) {
		t.Errorf("the certificate's user: got %q in %v, want carol in qa, dev and system:authenticated", u.Username, u.Groups)
	}
}

// checkTable checks kubectl get csr's header and name's row: a requested
// hour (60m, as upstream prints it), the admin as requestor, and condition.
func checkTable(t *testing.T, s *testserver.Server, name, condition string) {
	t.Helper()
	out := framework.Kubectl(t, s, "", "get", "csr", name)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get csr %s: got\n%s\nwant a header and a row", name, out)
	}
	if got, want := strings.Fields(lines[0]), []string{"NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION", "CONDITION"}; !slices.Equal(got, want) {
		t.Errorf("header: got %v, want %v", got, want)
	}
	row := strings.Fields(lines[1])
	if len(row) != 6 || row[0] != name || row[2] != clientSigner || row[3] != "admin" || row[4] != "60m" || row[5] != condition {
		t.Errorf("row: got %v, want %s, its age, %s, admin, 60m, %s", row, name, clientSigner, condition)
	}
}

// TestDeniedRequestIsNotSigned: kubectl certificate deny marks a request
// Denied, and it is never signed: a request approved after it is signed,
// and it still has no certificate (the controller takes them in order).
func TestDeniedRequestIsNotSigned(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	request, _ := newRequest(t, "mallory")
	createCSR(t, client, "mallory", request)
	if got, want := framework.Kubectl(t, s, "", "certificate", "deny", "mallory"), "certificatesigningrequest.certificates.k8s.io/mallory denied\n"; got != want {
		t.Errorf("kubectl certificate deny: got %q, want %q", got, want)
	}
	later, _ := newRequest(t, "later")
	createCSR(t, client, "later", later)
	framework.Kubectl(t, s, "", "certificate", "approve", "later")
	signed(t, client, "later")
	csr, err := client.CertificatesV1().CertificateSigningRequests().Get(t.Context(), "mallory", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(csr.Status.Certificate) > 0 || len(csr.Status.Conditions) != 1 || csr.Status.Conditions[0].Type != certificatesv1.CertificateDenied {
		t.Errorf("denied request: got conditions %v and %d bytes of certificate, want Denied only, none", csr.Status.Conditions, len(csr.Status.Certificate))
	}
	checkTable(t, s, "mallory", "Denied")
	// Once denied, it cannot be approved too.
	_, errOut, err := framework.RunKubectl(t, s, "", "certificate", "approve", "mallory")
	if want := "error: certificate signing request \"mallory\" is already Denied\n"; err == nil || errOut != want {
		t.Errorf("approving a denied request: got %v, %q; want %q", err, errOut, want)
	}
}

// TestApproveTakesTheVerb: a user who may update the approval subresource
// but has no approve verb on the signer is refused by CertificateApproval
// with upstream's message; bound to upstream's approver role, the same
// user approves. A request for system:masters is refused at creation.
func TestApproveTakesTheVerb(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	request, _ := newRequest(t, "erin")
	createCSR(t, client, "erin", request)
	bind(t, client, "csr-approval", "dave", rbacv1.PolicyRule{APIGroups: []string{certificatesv1.GroupName},
		Resources: []string{"certificatesigningrequests", "certificatesigningrequests/approval"}, Verbs: []string{"get", "list", "update"}})
	// Until RBAC's informers have the role, it is RBAC that refuses
	// (User "dave" cannot get resource ...).
	var errOut string
	framework.WaitUntil(t, func() bool {
		_, errOut, _ = framework.RunKubectl(t, s, "", "certificate", "approve", "erin", "--as=dave")
		return strings.HasPrefix(errOut, "Error from server (Forbidden)") && !strings.Contains(errOut, `User "dave" cannot`)
	}, "dave's role to take effect")
	want := `Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "erin" is forbidden: ` +
		`user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"` + "\n"
	if errOut != want {
		t.Errorf("kubectl certificate approve --as=dave: got %q, want %q", errOut, want)
	}
	framework.Kubectl(t, s, "", "create", "clusterrolebinding", "dave-approves", "--clusterrole=system:certificates.k8s.io:kube-apiserver-client-approver", "--user=dave")
	framework.WaitUntil(t, func() bool {
		_, _, err := framework.RunKubectl(t, s, "", "certificate", "approve", "erin", "--as=dave")
		return err == nil
	}, "dave's approval")
	signed(t, client, "erin")

	masters, _ := newRequest(t, "root", "system:masters")
	_, err := client.CertificatesV1().CertificateSigningRequests().Create(t.Context(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "root"},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: masters, SignerName: clientSigner, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}, metav1.CreateOptions{})
	if want := `certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`; err == nil || err.Error() != want {
		t.Errorf("a request for system:masters: got %v, want %q", err, want)
	}
}

// bind gives user a ClusterRole name of rule.
func bind(t *testing.T, client kubernetes.Interface, name, user string, rule rbacv1.PolicyRule) {
	t.Helper()
	ctx := t.Context()
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestSigningControllerCanBeTurnedOff: the csrsigning controller runs by
// default (a post-start hook of its name) and not with
// --controllers=-csrsigning-controller, as kube-controller-manager's.
func TestSigningControllerCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		controllers []string
		want        bool
	}{
		{name: "default", controllers: []string{"*"}, want: true},
		{name: "off", controllers: []string{"-" + controllers.CSRSigning, "*"}, want: false},
		{name: "off, by its short name", controllers: []string{"-csrsigning", "*"}, want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := framework.Start(t, func(o *server.Options) { o.Controllers = tt.controllers })
			hooks := framework.Kubectl(t, s, "", "get", "--raw", "/readyz?verbose")
			if got := strings.Contains(hooks, "poststarthook/"+controllers.CSRSigning+" ok"); got != tt.want {
				t.Errorf("the %s hook: got %v, want %v:\n%s", controllers.CSRSigning, got, tt.want, hooks)
			}
		})
	}
}
