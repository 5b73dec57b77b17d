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

package rbac

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// TestCredentialsThatDoNotAuthenticate: a certificate from another CA and a
// wrong token get 401, and nothing is logged as an error.
func TestCredentialsThatDoNotAuthenticate(t *testing.T) {
	s := testserver.Start(t)
	cfg := rest.AnonymousClientConfig(s.Config)
	cfg.CertData, cfg.KeyData = foreignCertificate(t)
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a certificate from another CA: got %v, want 401", err)
	}
	cfg = rest.AnonymousClientConfig(s.Config)
	cfg.BearerToken = "wrong"
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a wrong token: got %v, want 401", err)
	}
	if errs := s.LoggedErrors(); len(errs) > 0 {
		t.Errorf("logged errors: %q, want none", errs)
	}
}

// TestTokenFileAndAlwaysAllow: a user of --token-auth-file authenticates by
// its token; with --authorization-mode=AlwaysAllow it may do anything.
func TestTokenFileAndAlwaysAllow(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(`carol-token,carol,uid-1,"readers,ops"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode    string
		wantErr string
	}{
		{auth.AuthorizationRBAC, `secrets is forbidden: User "carol" cannot list resource "secrets" in API group "" in the namespace "default"`},
		{auth.AuthorizationAlwaysAllow, ""},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := testserver.Start(t, func(o *server.Options) { o.TokenAuthFile, o.AuthorizationMode = tokens, tc.mode })
			cfg := rest.AnonymousClientConfig(s.Config)
			cfg.BearerToken = "carol-token"
			check(t, kubernetes.NewForConfigOrDie(cfg), []request{{name: "carol lists secrets", do: listSecrets("default"), wantErr: tc.wantErr}})
		})
	}
}

// foreignCertificate is a client certificate for "mallory" in
// system:masters, signed by a CA the server does not know.
func foreignCertificate(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	return pkitest.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "mallory", Organization: []string{"system:masters"}},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}
