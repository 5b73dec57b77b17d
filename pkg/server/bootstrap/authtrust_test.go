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

package bootstrap

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// testCA is a PEM CA certificate named name, valid for the hour until
// notAfter.
func testCA(t *testing.T, name string, notAfter time.Time) string {
	t.Helper()
	return string(pkitest.NewCA(t, name, pkitest.Valid(notAfter.Add(-time.Hour), notAfter)).CertPEM())
}

// TestBootstrapAuthenticationInfo: the client CA is written into
// kube-system/extension-apiserver-authentication, beside the certificates
// another server put there, each once, expired ones dropped; with nothing
// to change, nothing is written.
func TestBootstrapAuthenticationInfo(t *testing.T) {
	year := time.Now().Add(365 * 24 * time.Hour)
	ours, theirs, expired := testCA(t, "ours", year), testCA(t, "theirs", year), testCA(t, "expired", time.Now().Add(-time.Hour))
	for _, tt := range []struct {
		name      string
		existing  map[string]string // nil: no ConfigMap
		want      string
		wantWrite bool
	}{
		{name: "missing", want: ours, wantWrite: true},
		{name: "another server's", existing: map[string]string{"client-ca-file": theirs, "requestheader-allowed-names": `["front"]`}, want: theirs + ours, wantWrite: true},
		{name: "already there", existing: map[string]string{"client-ca-file": theirs + ours}, want: theirs + ours},
		{name: "expired dropped", existing: map[string]string{"client-ca-file": expired + ours}, want: ours, wantWrite: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tt.existing != nil {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: authenticationInfo, Namespace: "kube-system"}, Data: tt.existing}
				if _, err := client.CoreV1().ConfigMaps("kube-system").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			client.ClearActions()
			if err := AuthenticationInfo(t.Context(), client, []byte(ours)); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoreV1().ConfigMaps("kube-system").Get(t.Context(), authenticationInfo, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Data["client-ca-file"] != tt.want {
				t.Errorf("client-ca-file:\n%s\nwant\n%s", got.Data["client-ca-file"], tt.want)
			}
			for k, v := range tt.existing {
				if k != "client-ca-file" && got.Data[k] != v {
					t.Errorf("%s = %q, want it kept (%q)", k, got.Data[k], v)
				}
			}
			writes := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" || a.GetVerb() == "update" {
					writes++
				}
			}
			if (writes > 0) != tt.wantWrite {
				t.Errorf("%d writes, want a write: %v", writes, tt.wantWrite)
			}
		})
	}
}
