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

package componentstatus

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// serverAt is an HTTPS probe of path at u (an httptest server's URL).
func serverAt(t *testing.T, u, path string) *HTTPServer {
	t.Helper()
	host, port, err := net.SplitHostPort(u[len("https://"):])
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return &HTTPServer{Addr: host, Port: p, Path: path, EnableHTTPS: true, TLSConfig: &tls.Config{InsecureSkipVerify: true}, UserAgent: "kube-probe/1.37"}
}

// TestHTTPServer: upstream's HTTP probe over HTTPS with any certificate:
// 200-299 a success with the body, an unfollowed redirect a warning,
// 400 and above a failure with the status code.
func TestHTTPServer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ok %s %s", r.UserAgent(), r.Header.Get("Accept"))
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "broken", http.StatusInternalServerError) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/healthz", http.StatusFound) })
	mux.HandleFunc("/nowhere", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusMultipleChoices) // no Location: nothing to follow
		fmt.Fprint(w, "choose")
	})
	s := httptest.NewTLSServer(mux)
	t.Cleanup(s.Close)
	tests := []struct {
		path    string
		result  Result
		message string
	}{
		{path: "/healthz", result: Success, message: "ok kube-probe/1.37 */*"},
		{path: "/moved", result: Success, message: "ok kube-probe/1.37 */*"},
		{path: "/nowhere", result: Warning, message: "Probe terminated redirects, Response body: choose"},
		{path: "/broken", result: Failure, message: "HTTP probe failed with statuscode: 500"},
		{path: "/missing", result: Failure, message: "HTTP probe failed with statuscode: 404"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			result, message, err := serverAt(t, s.URL, tt.path).DoServerCheck(t.Context())
			if result != tt.result || message != tt.message || err != nil {
				t.Errorf("probe: got %q, %q, %v; want %q, %q, no error", result, message, err, tt.result, tt.message)
			}
		})
	}
}

// TestHTTPServerUnreachable: a component that does not listen fails, the
// client's error its message (kubectl get cs's MESSAGE), with no error.
func TestHTTPServerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &HTTPServer{Addr: "127.0.0.1", Port: port, Path: "/healthz", EnableHTTPS: true}
	result, message, err := s.DoServerCheck(t.Context())
	want := fmt.Sprintf(`Get "https://127.0.0.1:%d/healthz": dial tcp 127.0.0.1:%d: connect: connection refused`, port, port)
	if result != Failure || message != want || err != nil {
		t.Errorf("probe: got %q, %q, %v; want %q, %q, no error", result, message, err, Failure, want)
	}
}

// TestServers: upstream's components and addresses, one etcd entry per
// storage config.
func TestServers(t *testing.T) {
	servers := Servers("kube-probe/1.37", storagebackend.Config{Prefix: "a"}, storagebackend.Config{Prefix: "b"})
	got := map[string]string{}
	for name, s := range servers {
		switch s := s.(type) {
		case *HTTPServer:
			got[name] = fmt.Sprintf("https=%t %s:%d%s insecure=%t %s", s.EnableHTTPS, s.Addr, s.Port, s.Path, s.TLSConfig.InsecureSkipVerify, s.UserAgent)
		case *EtcdServer:
			got[name] = "etcd " + s.Prefix
		}
	}
	want := map[string]string{
		"controller-manager": "https=true 127.0.0.1:10257/healthz insecure=true kube-probe/1.37",
		"scheduler":          "https=true 127.0.0.1:10259/healthz insecure=true kube-probe/1.37",
		"etcd-0":             "etcd a",
		"etcd-1":             "etcd b",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

// TestEtcdServerFails: an etcd the server cannot make a client of fails,
// with no message and the error. (One that does not answer fails so too,
// after k8s.io/apiserver's 20s dial timeout.)
func TestEtcdServerFails(t *testing.T) {
	s := &EtcdServer{Config: storagebackend.Config{Type: "etcd2"}}
	result, message, err := s.DoServerCheck(t.Context())
	if want := "etcd2 is no longer a supported storage backend"; result != Failure || message != "" || err == nil || err.Error() != want {
		t.Errorf("probe: got %q, %q, %v; want %q, no message, %s", result, message, err, Failure, want)
	}
}
