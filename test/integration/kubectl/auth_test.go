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

package kubectl

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

func TestAnonymousRequestsAreForbiddenButHealthAndVersion(t *testing.T) {
	t.Parallel()
	s, _ := framework.Start(t)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Config.CAData) {
		t.Fatal("kubeconfig CA is not PEM")
	}
	// Verifying the serving certificate against the kubeconfig's CA is part of the test.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(path, token string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.Config.Host+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}

	for _, path := range []string{"/livez", "/readyz", "/healthz", "/version", "/readyz/etcd", "/livez/etcd"} {
		if code, body := get(path, ""); code != http.StatusOK {
			t.Errorf("anonymous GET %s: got %d (%s), want 200", path, code, body)
		}
	}
	// As kube-apiserver with --anonymous-auth=true: system:anonymous, whom
	// RBAC allows nothing more.
	for path, want := range map[string]string{
		"/api/v1/namespaces":                 `namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope`,
		"/api":                               `forbidden: User "system:anonymous" cannot get path "/api"`,
		"/apis":                              `forbidden: User "system:anonymous" cannot get path "/apis"`,
		"/metrics":                           `forbidden: User "system:anonymous" cannot get path "/metrics"`,
		"/openapi/v2":                        `forbidden: User "system:anonymous" cannot get path "/openapi/v2"`,
		"/api/v1/namespaces/default/secrets": `secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" in the namespace "default"`,
	} {
		code, body := get(path, "")
		var status metav1.Status
		if err := json.Unmarshal(body, &status); code != http.StatusForbidden || err != nil || status.Reason != metav1.StatusReasonForbidden || status.Message != want {
			t.Errorf("anonymous GET %s: got %d %s, want 403 %q", path, code, body, want)
		}
	}
	if code, _ := get("/api/v1/namespaces", "wrong-token"); code != http.StatusUnauthorized {
		t.Errorf("GET with a wrong token: got %d, want 401", code)
	}
	if code, body := get("/api/v1/namespaces", s.Config.BearerToken); code != http.StatusOK {
		t.Errorf("GET with the admin token: got %d (%s), want 200", code, body)
	}
	code, body := get("/metrics", s.Config.BearerToken)
	if code != http.StatusOK || !strings.Contains(string(body), "apiserver_request_total") {
		t.Errorf("GET /metrics with the admin token: got %d, want 200 with apiserver_request_total", code)
	}

	// A path no API serves: kube-apiserver's plain 404, not a Status.
	if code, body := get("/no/such/path", s.Config.BearerToken); code != http.StatusNotFound || string(body) != "404 page not found\n" {
		t.Errorf("GET /no/such/path: got %d %q, want 404 %q", code, body, "404 page not found\n")
	}

	code, body = get("/version", "")
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil || code != http.StatusOK {
		t.Fatalf("/version: got %d %s", code, body)
	}
	v, err := utilversion.ParseSemantic(info.GitVersion)
	if err != nil || v.Major() != 1 || v.Minor() != 37 || info.Major != "1" || info.Minor != "37" {
		t.Errorf("/version: got %+v, want gitVersion v1.37.x, major 1, minor 37", info)
	}
}

func TestDataDirFilesArePrivate(t *testing.T) {
	t.Parallel()
	s, _ := framework.Start(t)
	for _, name := range []string{"ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.token", "kubeconfig"} {
		fi, err := os.Stat(filepath.Join(s.DataDir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s: got mode %o, want 600", name, mode)
		}
	}
	fi, err := os.Stat(s.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		t.Errorf("data dir: got mode %o, want no group/other access", mode)
	}
}
