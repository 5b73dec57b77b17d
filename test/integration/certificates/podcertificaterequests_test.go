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
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

const podSigner = "example.com/pod-signer"

// podIdentity creates a service account, a node and a pod of both in ns,
// and returns the spec of a request of that pod for podSigner, keyed by key.
func podIdentity(t *testing.T, client kubernetes.Interface, ns string, key ed25519.PrivateKey) certificatesv1.PodCertificateRequestSpec {
	t.Helper()
	ctx := t.Context()
	sa, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "workload"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pcr-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "workload"},
		Spec: corev1.PodSpec{NodeName: node.Name, ServiceAccountName: sa.Name, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return certificatesv1.PodCertificateRequestSpec{SignerName: podSigner, PodName: pod.Name, PodUID: pod.UID,
		ServiceAccountName: sa.Name, ServiceAccountUID: sa.UID, NodeName: "pcr-node", NodeUID: node.UID, StubPKCS10Request: stub}
}

// asUser is client impersonating name.
func asUser(s *rest.Config, name string) kubernetes.Interface {
	config := rest.CopyConfig(s)
	config.Impersonate = rest.ImpersonationConfig{UserName: name}
	return kubernetes.NewForConfigOrDie(config)
}

// TestPodCertificateRequests: a request of a pod is created (its
// maxExpirationSeconds defaulted), read, selected by pod, node and signer,
// printed with upstream's columns and issued by a user who may sign for
// its signer; one who may update the status but not sign is refused, as a
// request without a valid key is, with upstream's messages.
func TestPodCertificateRequests(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	requests := client.CertificatesV1().PodCertificateRequests(ns)
	created, err := requests.Create(ctx, &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "workload-1"},
		Spec: podIdentity(t, client, ns, key)}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := created.Spec.MaxExpirationSeconds; got == nil || *got != 86400 {
		t.Errorf("maxExpirationSeconds: got %v, want the default, 86400", got)
	}
	if got, err := requests.Get(ctx, "workload-1", metav1.GetOptions{}); err != nil || got.Spec.PodUID != created.Spec.PodUID {
		t.Errorf("get: got %v, %v; want the created request", got, err)
	}
	for _, selector := range []string{"spec.podName=workload", "spec.nodeName=pcr-node", "spec.signerName=" + podSigner, "metadata.name=workload-1"} {
		list, err := requests.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil || len(list.Items) != 1 || list.Items[0].Name != "workload-1" {
			t.Errorf("list %s: got %v, %v; want workload-1", selector, list, err)
		}
	}
	if list, err := requests.List(ctx, metav1.ListOptions{FieldSelector: "spec.podName=other"}); err != nil || len(list.Items) != 0 {
		t.Errorf("list spec.podName=other: got %v, %v; want none", list, err)
	}
	_, err = requests.List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=" + ns})
	if want := "field label not supported: metadata.namespace"; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("list metadata.namespace=%s: got %v, want 400 %q (upstream's labels)", ns, err, want)
	}
	header := strings.Fields(strings.SplitN(framework.Kubectl(t, s, "", "get", "podcertificaterequests", "-n", ns), "\n", 2)[0])
	if got, want := strings.Join(header, " "), "NAME PODNAME SERVICEACCOUNTNAME NODENAME SIGNERNAME STATE UNVERIFIEDUSERANNOTATIONS"; got != want {
		t.Errorf("kubectl get header: got %q, want %q", got, want)
	}

	bad := created.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Name: "workload-2"}
	bad.Spec.StubPKCS10Request = []byte("garbage")
	_, err = requests.Create(ctx, bad, metav1.CreateOptions{})
	if want := `PodCertificateRequest.certificates.k8s.io "workload-2" is invalid: spec.stubPKCS10Request: Invalid value: must be a valid PKCS#10 CSR`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("create with a bad stub request: got %v, want 422 %q", err, want)
	}

	statusWriter := rbacv1.PolicyRule{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"podcertificaterequests", "podcertificaterequests/status"},
		Verbs: []string{"get", "update"}}
	bind(t, client, "pcr-status-carol", "carol", statusWriter)
	bind(t, client, "pcr-signer-carol", "carol", rbacv1.PolicyRule{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"signers"},
		ResourceNames: []string{podSigner}, Verbs: []string{"sign"}})
	bind(t, client, "pcr-status-mallory", "mallory", statusWriter)
	issue := func(user string) (*certificatesv1.PodCertificateRequest, error) {
		req, err := asUser(s.Config, user).CertificatesV1().PodCertificateRequests(ns).Get(ctx, "workload-1", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		req.Status = issuedStatus(t, key, time.Now().Add(-time.Minute).Truncate(time.Second))
		return asUser(s.Config, user).CertificatesV1().PodCertificateRequests(ns).UpdateStatus(ctx, req, metav1.UpdateOptions{})
	}
	// Until RBAC's informers have the roles, it is RBAC that refuses.
	var malloryErr error
	framework.WaitUntil(t, func() bool {
		_, malloryErr = issue("mallory")
		return malloryErr == nil || !strings.Contains(malloryErr.Error(), `User "mallory" cannot`)
	}, "mallory's role to take effect")
	want := `PodCertificateRequest.certificates.k8s.io "workload-1" is invalid: spec.signerName: Forbidden: User "mallory" is not permitted to "sign" for signer "example.com/pod-signer"`
	if !apierrors.IsInvalid(malloryErr) || malloryErr.Error() != want {
		t.Errorf("status from a user who may not sign: got %v, want 422 %q", malloryErr, want)
	}
	var got *certificatesv1.PodCertificateRequest
	framework.WaitUntil(t, func() bool {
		got, err = issue("carol")
		return err == nil || !strings.Contains(err.Error(), `User "carol" cannot`) && !strings.Contains(err.Error(), `User "carol" is not permitted`)
	}, "carol's roles to take effect")
	if err != nil || got.Status.CertificateChain == "" || got.Spec.PodName != "workload" {
		t.Fatalf("status from a signer: got %v, %v; want the request issued", got, err)
	}
	if out := framework.Kubectl(t, s, "", "get", "podcertificaterequests", "-n", ns, "--field-selector=spec.podName=workload", "--no-headers"); !framework.ContainsField(out, "Issued") {
		t.Errorf("kubectl get after issuing: got %q, want STATE Issued", out)
	}
}

// issuedStatus issues key a certificate valid from notBefore for two
// hours, self-signed.
func issuedStatus(t *testing.T, key ed25519.PrivateKey, notBefore time.Time) certificatesv1.PodCertificateRequestStatus {
	t.Helper()
	template := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "workload"}, NotBefore: notBefore, NotAfter: notBefore.Add(2 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return certificatesv1.PodCertificateRequestStatus{
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
			Reason: "Issued", Message: "issued", LastTransitionTime: metav1.Now()}},
		CertificateChain: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		NotBefore:        &metav1.Time{Time: notBefore},
		NotAfter:         &metav1.Time{Time: notBefore.Add(2 * time.Hour)},
		BeginRefreshAt:   &metav1.Time{Time: notBefore.Add(time.Hour)},
	}
}
