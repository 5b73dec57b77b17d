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
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// caPEM is a self-signed CA certificate.
func caPEM(t *testing.T) string {
	t.Helper()
	return string(pkitest.NewCA(t, "ca").CertPEM())
}

// TestClusterTrustBundles: bundles are selected by signer and printed
// with upstream's columns; a bundle of a signer takes the attest verb on
// it (ClusterTrustBundleAttest); every service account may read them
// (system:cluster-trust-bundle-discovery).
func TestClusterTrustBundles(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	bundles := client.CertificatesV1().ClusterTrustBundles()
	for _, b := range []*certificatesv1.ClusterTrustBundle{
		{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:one"}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: caPEM(t)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unsigned"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: caPEM(t)}},
	} {
		if _, err := bundles.Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := bundles.List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=example.com/signer"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "example.com:signer:one" {
		t.Errorf("bundles of example.com/signer: got %v, %v; want example.com:signer:one", list, err)
	}
	out := framework.Kubectl(t, s, "", "get", "clustertrustbundles")
	if want := "NAME                     SIGNERNAME\nexample.com:signer:one   example.com/signer\nunsigned                 <none>\n"; out != want {
		t.Errorf("kubectl get clustertrustbundles: got\n%s\nwant\n%s", out, want)
	}

	bind(t, client, "bundle-writer", "frank", rbacv1.PolicyRule{APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"create"}})
	frankConfig := rest.CopyConfig(s.Config)
	frankConfig.Impersonate = rest.ImpersonationConfig{UserName: "frank"}
	frank := kubernetes.NewForConfigOrDie(frankConfig).CertificatesV1().ClusterTrustBundles()
	bundle := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:two"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: caPEM(t)}}
	var createErr error
	framework.WaitUntil(t, func() bool {
		_, createErr = frank.Create(ctx, bundle, metav1.CreateOptions{})
		return createErr == nil || !strings.Contains(createErr.Error(), `User "frank" cannot`)
	}, "frank's role to take effect")
	want := `clustertrustbundles.certificates.k8s.io "example.com:signer:two" is forbidden: user not permitted to attest for signerName "example.com/signer"`
	if createErr == nil || createErr.Error() != want {
		t.Errorf("a bundle without the attest verb: got %v, want %q", createErr, want)
	}

	reader, err := s.ServiceAccountConfig(ctx, "default", "reader")
	if err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		list, err := kubernetes.NewForConfigOrDie(reader).CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 2
	}, "a service account to list the bundles")
}

// TestRequestsInEveryForm: requests are selected by signer, watched, and
// read as protobuf too.
func TestRequestsInEveryForm(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	w, err := client.CertificatesV1().CertificateSigningRequests().Watch(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=" + clientSigner})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	request, _ := newRequest(t, "grace")
	created := createCSR(t, client, "grace", request)
	if _, err := client.CertificatesV1().CertificateSigningRequests().Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: "example.com/other",
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	event := framework.NextEvent(t, w)
	if got := event.Object.(*certificatesv1.CertificateSigningRequest); got.Name != "grace" {
		t.Errorf("first event of the client signer's requests: got %s %s, want grace's", event.Type, got.Name)
	}
	list, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{FieldSelector: "spec.signerName=example.com/other"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "other" {
		t.Errorf("requests of example.com/other: got %v, %v; want other", list, err)
	}
	proto := rest.CopyConfig(s.Config)
	proto.ContentType = runtime.ContentTypeProtobuf
	got, err := kubernetes.NewForConfigOrDie(proto).CertificatesV1().CertificateSigningRequests().Get(ctx, "grace", metav1.GetOptions{})
	if err != nil || string(got.Spec.Request) != string(created.Spec.Request) || !slices.Equal(got.Spec.Usages, created.Spec.Usages) {
		t.Errorf("protobuf get: got %v, %v; want the created request", got, err)
	}
}
