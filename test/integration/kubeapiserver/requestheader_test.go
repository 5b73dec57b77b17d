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

package kubeapiserver

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// TestRequestHeaderAuthentication: with kube-apiserver's --requestheader-*
// flags, a front proxy's client certificate (signed by the request-header
// CA, of an allowed name) authenticates the user its headers name. The same
// headers from a user's own certificate, or from no certificate, are
// ignored; a proxy certificate of a name not allowed is a 401. The trust is
// published in kube-system/extension-apiserver-authentication as
// kube-apiserver writes it, for extension API servers to read.
func TestRequestHeaderAuthentication(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	front, flags := frontProxy(t, p)
	s := startAPIServer(t, startEtcd(t), p, append(flags, "--requestheader-uid-headers=X-Remote-Uid")...)
	proxy := func(cn string) *rest.Config {
		cert, key := proxyCertificate(t, front, cn)
		return &rest.Config{Host: s.host, TLSClientConfig: rest.TLSClientConfig{CAData: p.servingCA, CertData: cert, KeyData: key}}
	}
	whoami := func(cfg *rest.Config) (authenticationv1.UserInfo, error) {
		// The headers a front proxy (an aggregator) sets, with client-go's transport for them.
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return transport.NewAuthProxyRoundTripper("alice", "alice-1", []string{"devs"}, map[string][]string{"scopes": {"read"}}, rt)
		}
		review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			return authenticationv1.UserInfo{}, err
		}
		return review.Status.UserInfo, nil
	}

	if u, err := whoami(proxy("front-proxy-client")); err != nil || u.Username != "alice" || u.UID != "alice-1" || !slices.Equal(u.Groups, []string{"devs", "system:authenticated"}) ||
		!slices.Equal(u.Extra["scopes"], authenticationv1.ExtraValue{"read"}) {
		t.Errorf("the front proxy's request for alice: got %+v, %v; want alice (uid alice-1) in devs and system:authenticated, extra scopes=read", u, err)
	}
	if u, err := whoami(s.config(t, "bob")); err != nil || u.Username != "bob" {
		t.Errorf("bob's own certificate with the headers: got %+v, %v; want bob", u, err)
	}
	if _, err := whoami(&rest.Config{Host: s.host, TLSClientConfig: rest.TLSClientConfig{CAData: p.servingCA}}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), `User "system:anonymous"`) {
		t.Errorf("the headers without a certificate: got %v, want system:anonymous's 403", err)
	}
	if _, err := whoami(proxy("intruder")); !apierrors.IsUnauthorized(err) {
		t.Errorf("a proxy certificate of a name not allowed: got %v, want 401", err)
	}

	cm, err := s.admin(t).CoreV1().ConfigMaps("kube-system").Get(ctx(t), "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"client-ca-file": string(p.servingCA), "requestheader-client-ca-file": string(front.CertPEM()),
		"requestheader-allowed-names": `["front-proxy-client"]`, "requestheader-username-headers": `["X-Remote-User"]`,
		"requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		"requestheader-uid-headers": `["X-Remote-Uid"]`} {
		if got := cm.Data[key]; got != want {
			t.Errorf("extension-apiserver-authentication %s = %q, want %q", key, got, want)
		}
	}
}

// frontProxy makes a front proxy's CA, and returns it with the
// --requestheader-* flags that trust its certificates of the name
// front-proxy-client, as kubeadm passes them.
func frontProxy(t *testing.T, p *pki) (*pkitest.CA, []string) {
	t.Helper()
	front := pkitest.NewCA(t, "front-proxy-ca")
	return front, []string{"--requestheader-client-ca-file=" + pkitest.WriteFile(t, p.dir, "front-proxy-ca.crt", front.CertPEM()),
		"--requestheader-allowed-names=front-proxy-client", "--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group", "--requestheader-extra-headers-prefix=X-Remote-Extra-"}
}

// proxyCertificate is a client certificate and key (PEM) of the name cn,
// signed by front.
func proxyCertificate(t *testing.T, front *pkitest.CA, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	return front.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
}
