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
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// TestStalledWatchDoesNotHoldTheShutdown: a watch handler blocked writing
// to a client that does not read, over HTTP/1.1 or HTTP/2, has its write
// cut off once shutdown waits for the handlers, and returns long before
// the wait would give up.
func TestStalledWatchDoesNotHoldTheShutdown(t *testing.T) {
	for _, http2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if http2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) {
			handlers := &WatchHandlers{}
			srv, returned := startUnreadWatch(t, http2, handlers, nil)
			defer srv.Close()
			const giveUp = time.Minute
			waited := make(chan struct{})
			go func() {
				defer close(waited)
				handlers.Wait(giveUp)
			}()
			select {
			case err := <-returned:
				if err == nil || errors.Is(err, context.Canceled) {
					t.Errorf("the handler's write: got %v, want it cut off", err)
				}
			case <-time.After(giveUp / 2):
				t.Fatal("the stalled handler still writes")
			}
			select {
			case <-waited:
			case <-time.After(giveUp / 2):
				t.Fatal("wait still waits for a handler that has returned")
			}
		})
	}
}

// TestBlockedWatchOnABusyConnectionIsNotCut: an HTTP/2 watch's write
// blocked for stalledWrite is not cut off while its connection has been
// written to since (its frames wait behind other streams'), only once the
// connection has been quiet for stalledWrite too.
func TestBlockedWatchOnABusyConnectionIsNotCut(t *testing.T) {
	handlers := &WatchHandlers{}
	other := make(chan string, 1)
	srv, returned := startUnreadWatch(t, true, handlers, func(w http.ResponseWriter, r *http.Request) {
		other <- r.RemoteAddr
		_, _ = w.Write([]byte("ok"))
	})
	defer srv.Close()
	ww := blockedWriter(t, handlers)
	began := time.Unix(0, ww.writing.Load())

	// Another stream on the same connection is written to.
	resp, err := srv.Client().Get(srv.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if addr := <-other; addr != ww.remoteAddr {
		t.Fatalf("the second request came from %s, want the watch's connection %s", addr, ww.remoteAddr)
	}
	// The server records a write once it returns, maybe after the client
	// has read what it wrote.
	var last time.Time
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		var ok bool
		last, ok = handlers.ConnWritten(ww.remoteAddr)
		return ok && last.After(began), nil
	}); err != nil {
		t.Fatalf("the connection's last write: got %v, want one after the watch's write began at %v", last, began)
	}

	if n := handlers.cutStalled(last.Add(stalledWrite - time.Nanosecond)); n != 0 {
		t.Errorf("blocked for over %s, its connection written %s before: cut %d write(s), want none", stalledWrite, stalledWrite-time.Nanosecond, n)
	}
	if n := handlers.cutStalled(last.Add(stalledWrite)); n != 1 {
		t.Fatalf("its connection quiet for %s: cut %d write(s), want 1", stalledWrite, n)
	}
	select {
	case err := <-returned:
		if err == nil {
			t.Error("the handler's write returned no error, want it cut off")
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the cut-off handler still writes")
	}
}

// startUnreadWatch serves, over TLS on a ClosingListener whose LastWrite
// is handlers.ConnWritten, a watch at / that writes until it is cut off
// (its error goes to returned), and other at /other; the watch's client
// never reads its body.
func startUnreadWatch(t *testing.T, http2 bool, handlers *WatchHandlers, other http.HandlerFunc) (*httptest.Server, <-chan error) {
	t.Helper()
	returned := make(chan error, 1)
	chunk := []byte(strings.Repeat("x", 64<<10))
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/other" {
			other(w, r)
			return
		}
		for {
			if _, err := w.Write(chunk); err != nil {
				returned <- err
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	asWatch := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/other" {
				r = r.WithContext(request.WithRequestInfo(r.Context(), &request.RequestInfo{Verb: "watch"}))
			}
			h.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewUnstartedServer(asWatch(handlers.Wrap(stream)))
	l := NewClosingListener(srv.Listener, func() {})
	srv.Listener, handlers.ConnWritten = l, l.LastWrite
	srv.EnableHTTP2 = http2
	srv.StartTLS()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req) // its body never read
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if got := resp.ProtoMajor == 2; got != http2 {
		t.Fatalf("got %s, want HTTP/2 %t", resp.Proto, http2)
	}
	return srv, returned
}

// blockedWriter returns handlers' one watch once its write has been
// blocked for 100 ms.
func blockedWriter(t *testing.T, handlers *WatchHandlers) *watchWriter {
	t.Helper()
	var ww *watchWriter
	var began int64
	var since time.Time
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		handlers.mu.Lock()
		defer handlers.mu.Unlock()
		for w := range handlers.writers {
			ww = w
		}
		if ww == nil {
			return false, nil
		}
		if b := ww.writing.Load(); b == 0 || b != began {
			began, since = b, time.Now()
			return false, nil
		}
		return time.Since(since) >= 100*time.Millisecond, nil
	}); err != nil {
		t.Fatal("the watch's write did not block")
	}
	return ww
}

// TestServeReturnsOnceConnectionsAreClosed: after Shutdown, the HTTP
// server's Serve returns only once the requests have drained and every
// connection is closed, so that Shutdown, which waits for Serve, finds no
// connection left on its first poll.
func TestServeReturnsOnceConnectionsAreClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	l := NewClosingListener(ln, func() { <-release })
	hs := &http.Server{Handler: http.NotFoundHandler()}
	served := make(chan int, 1)
	go func() {
		_ = hs.Serve(l)
		l.mu.Lock()
		defer l.mu.Unlock()
		served <- len(l.conns)
	}()
	conn, err := net.Dial("tcp", ln.Addr().String()) // open, never used
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.conns) == 1, nil
	}); err != nil {
		t.Fatal("the connection was not accepted")
	}

	shutdown := make(chan error, 1)
	go func() { shutdown <- hs.Shutdown(context.Background()) }()
	select {
	case <-served:
		t.Fatal("Serve returned before the requests drained")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if open := <-served; open != 0 {
		t.Errorf("Serve returned with %d connection(s) open", open)
	}
	if err := <-shutdown; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the connection is still open")
	}
}
