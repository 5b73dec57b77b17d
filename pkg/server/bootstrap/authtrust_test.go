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
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
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
		{name: "another server's", existing: map[string]string{"client-ca-file": theirs, "requestheader-client-ca-file": theirs, "requestheader-allowed-names": `["front"]`}, want: theirs + ours, wantWrite: true},
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
			ca, err := dynamiccertificates.NewStaticCAContent("ours", []byte(ours))
			if err != nil {
				t.Fatal(err)
			}
			if err := AuthenticationInfo(t.Context(), client, ca, nil); err != nil {
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

// TestBootstrapRequestHeaderInfo: the request-header trust is written as
// kube-apiserver writes it (each list as JSON, the uid headers only when
// there are some), after another server's, each entry once; with none of
// its own, a server keeps another's.
func TestBootstrapRequestHeaderInfo(t *testing.T) {
	year := time.Now().Add(365 * 24 * time.Hour)
	client, front, theirs := testCA(t, "client", year), testCA(t, "front", year), testCA(t, "theirs", year)
	ours := &requestHeaderInfo{CA: []byte(front), UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}, AllowedNames: []string{"front-proxy-client"}}
	another := map[string]string{"client-ca-file": client, "requestheader-client-ca-file": theirs, "requestheader-allowed-names": `["aggregator"]`,
		"requestheader-username-headers": `["X-Remote-User","X-Remote-User"]`, "requestheader-uid-headers": `["X-Remote-Uid"]`}
	for _, tt := range []struct {
		name          string
		existing      map[string]string
		requestHeader *requestHeaderInfo
		want          map[string]string
	}{
		{name: "ours", requestHeader: ours, want: map[string]string{"client-ca-file": client, "requestheader-client-ca-file": front,
			"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `["X-Remote-Group"]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`, "requestheader-allowed-names": `["front-proxy-client"]`}},
		{name: "after another's", existing: another, requestHeader: ours, want: map[string]string{"client-ca-file": client, "requestheader-client-ca-file": theirs + front,
			"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `["X-Remote-Group"]`, "requestheader-uid-headers": `["X-Remote-Uid"]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`, "requestheader-allowed-names": `["aggregator","front-proxy-client"]`}},
		{name: "another's only", existing: another, want: map[string]string{"client-ca-file": client, "requestheader-client-ca-file": theirs,
			"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `[]`, "requestheader-uid-headers": `["X-Remote-Uid"]`,
			"requestheader-extra-headers-prefix": `[]`, "requestheader-allowed-names": `["aggregator"]`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := authenticationInfoData(tt.existing, []byte(client), tt.requestHeader)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("data:\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}
