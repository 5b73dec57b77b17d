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
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// InProcess is an http.RoundTripper that serves each request with the
// server's own handler chain, in this process, without a connection: the
// apiextensions-apiserver's loopback clients use it, so that its CRD
// informer can list and watch before the server listens (see Server.Run).
// Requests go through the whole chain (authentication with the loopback
// token, filters, watch handling) as they would over the network; the
// response streams through a pipe, so a watch delivers its events as the
// handler flushes them and closing the response body ends the request.
type InProcess struct {
	handler atomic.Pointer[http.Handler] // set once the server exists
}

func (t *InProcess) SetHandler(h http.Handler) { t.handler.Store(&h) }

func (t *InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.handler.Load()
	if h == nil {
		return nil, errors.New("in-process transport: the server is not built yet")
	}
	ctx, cancel := context.WithCancel(req.Context())
	in := req.Clone(ctx)
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	pr, pw := io.Pipe()
	w := &pipeResponseWriter{ctx: ctx, header: http.Header{}, body: pw, started: make(chan struct{})}
	go func() {
		defer cancel() // as net/http cancels a request's context once its handler returns
		defer func() {
			err := io.EOF
			if r := recover(); r != nil && r != http.ErrAbortHandler {
				err = fmt.Errorf("in-process handler panic: %v", r)
			} else if r != nil {
				err = io.ErrUnexpectedEOF
			}
			w.start(http.StatusOK)
			_ = pw.CloseWithError(err)
		}()
		(*h).ServeHTTP(w, in)
	}()
	select {
	case <-w.started:
	case <-ctx.Done():
		cancel()
		_ = pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          &cancelingBody{PipeReader: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponseWriter is the handler's side of an InProcess request: the
// status and headers are the response's once it writes, flushes or
// returns; its body goes to the pipe.
type pipeResponseWriter struct {
	ctx     context.Context // the request's
	header  http.Header
	body    *io.PipeWriter
	once    sync.Once
	started chan struct{}
	status  int         // valid once started is closed
	sent    http.Header // the header at that moment
}

func (w *pipeResponseWriter) start(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.started)
	})
}

func (w *pipeResponseWriter) Header() http.Header { return w.header }

func (w *pipeResponseWriter) WriteHeader(status int) { w.start(status) }

func (w *pipeResponseWriter) Write(b []byte) (int, error) {
	w.start(http.StatusOK)
	return w.body.Write(b)
}

// Flush: what was written has reached the reader already (a pipe holds
// nothing), but a flush before any write sends the headers.
func (w *pipeResponseWriter) Flush() { w.start(http.StatusOK) }

// CloseNotify is there because the apiserver's response writer wrappers
// keep Flush only for writers that have it too, as net/http's do.
func (w *pipeResponseWriter) CloseNotify() <-chan bool {
	closed := make(chan bool, 1)
	go func() {
		<-w.ctx.Done()
		closed <- true
	}()
	return closed
}

// cancelingBody ends the request (its context) when the client closes
// the response body, as a closed connection would.
type cancelingBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *cancelingBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}
