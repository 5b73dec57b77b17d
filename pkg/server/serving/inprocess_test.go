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

package serving

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestInProcessStreamsTheResponseAndClosingItEndsTheRequest(t *testing.T) {
	next := make(chan string)
	handlerDone := make(chan error, 1)
	transport := &InProcess{}
	transport.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RequestURI != "/watch?x=1" || r.Header.Get("Authorization") != "Bearer t" {
			t.Errorf("the handler got %q with Authorization %q", r.RequestURI, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusAccepted)
		w.(http.Flusher).Flush()
		for line := range next {
			if _, err := io.WriteString(w, line+"\n"); err != nil {
				handlerDone <- err
				return
			}
		}
		<-r.Context().Done()
		handlerDone <- r.Context().Err()
	}))

	req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/watch?x=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t")
	resp, err := transport.RoundTrip(req) // returns while the handler still runs
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("status %d, Content-Type %q; want 202 and text/plain", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewReader(resp.Body)
	for _, want := range []string{"one", "two"} {
		next <- want
		got, err := lines.ReadString('\n')
		if err != nil || got != want+"\n" {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	close(next)
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-handlerDone:
		if err == nil {
			t.Fatal("the handler's context did not end")
		}
	case <-time.After(time.Minute):
		t.Fatal("closing the body did not end the handler's request")
	}
}

func TestInProcessEndsTheBodyWhenTheHandlerReturns(t *testing.T) {
	transport := &InProcess{}
	transport.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		http.Error(w, "got "+string(body), http.StatusConflict)
	}))
	resp, body, err := roundTrip(t, transport, http.MethodPost, strings.NewReader("payload"))
	if err != nil || resp.StatusCode != http.StatusConflict || string(body) != "got payload\n" {
		t.Fatalf("status %d, body %q, %v; want 409 and %q", resp.StatusCode, body, err, "got payload\n")
	}
}

func TestInProcessTurnsAHandlerPanicIntoAReadError(t *testing.T) {
	transport := &InProcess{}
	transport.SetHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "partial")
		panic("boom")
	}))
	_, body, err := roundTrip(t, transport, http.MethodGet, nil)
	if err == nil || !strings.Contains(err.Error(), "boom") || string(body) != "partial" {
		t.Fatalf("read %q, %v; want %q and an error naming the panic", body, err, "partial")
	}
}

// roundTrip sends a request with body through transport and reads the
// response's body to its end; err is the read's.
func roundTrip(t *testing.T, transport *InProcess, method string, body io.Reader) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(method, "https://127.0.0.1:6443/api", body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	read, err := io.ReadAll(resp.Body)
	return resp, read, err
}

func TestInProcessBeforeTheServerExists(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := (&InProcess{}).RoundTrip(req); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a request before SetHandler succeeded")
	}
}
