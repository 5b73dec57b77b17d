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

package admission

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// review answers one AdmissionRequest.
type review func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// hookServer is a webhook server in the test process: it serves
// AdmissionReviews over TLS with the certificate in a cert dir (tls.crt,
// tls.key), as controller-runtime's webhook server does, and records the
// requests it got.
type hookServer struct {
	mu       sync.Mutex
	requests map[string][]*admissionv1.AdmissionRequest // by path
}

// serveHooks serves handlers (by path) on host:port until the test ends.
func serveHooks(t *testing.T, host string, port int, certDir string, handlers map[string]review) *hookServer {
	t.Helper()
	hs := &hookServer{requests: map[string][]*admissionv1.AdmissionRequest{}}
	mux := http.NewServeMux()
	for path, handle := range handlers {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			var in admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
				http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			hs.mu.Lock()
			hs.requests[path] = append(hs.requests[path], in.Request)
			hs.mu.Unlock()
			resp := handle(in.Request)
			resp.UID = in.Request.UID
			out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(&out)
		})
	}
	serveTLS(t, host, port, certDir, mux)
	return hs
}

// serveTLS serves h over TLS on host:port, with the certificate in
// certDir (tls.crt, tls.key), until the test ends.
func serveTLS(t *testing.T, host string, port int, certDir string, h http.Handler) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)), &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("webhook server: %v", err)
		}
	})
}

// got returns the requests path got.
func (hs *hookServer) got(path string) []*admissionv1.AdmissionRequest {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]*admissionv1.AdmissionRequest(nil), hs.requests[path]...)
}

func allow(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// patch answers with a JSONPatch.
func patch(ops string) review {
	return func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		pt := admissionv1.PatchTypeJSONPatch
		return &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(ops), PatchType: &pt}
	}
}
