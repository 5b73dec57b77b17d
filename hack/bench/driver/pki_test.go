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

package driver

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
)

// TestUpstreamPKI checks that kube-apiserver's serving certificate is one
// the bench's kubeconfigs trust for 127.0.0.1, and that the token file
// makes the token an admin.
func TestUpstreamPKI(t *testing.T) {
	p, err := newUpstreamPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(p.path(servingCertFile), p.path(servingKeyFile))
	if err != nil {
		t.Fatalf("loading the serving certificate: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.caPEM) {
		t.Fatal("the CA PEM holds no certificate")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("the serving certificate does not verify for 127.0.0.1: %v", err)
	}
	tokens, err := os.ReadFile(p.path(tokensFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(tokens), p.token+","; !strings.HasPrefix(got, want) || !strings.Contains(got, "system:masters") {
		t.Errorf("got token file %q, want a line starting %q in group system:masters", got, want)
	}
	for _, file := range []string{saKeyFile, saPublicFile} {
		if _, err := os.Stat(p.path(file)); err != nil {
			t.Errorf("service account key: %v", err)
		}
	}
}
