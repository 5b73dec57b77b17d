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
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// k8s.io/apiserver gzips a response (with the APIResponseCompression gate,
// on by default) when the client accepts gzip and the response's first
// write is over 128 KiB, or, for a streaming encoder whose first write is
// a few bytes, once what it wrote is; always at level 1, with the standard
// library's compress/gzip, which takes a large share of the time of a
// large LIST. WithGzip does the same for the GET and LIST requests of
// resources, with the same rule and headers, but with
// github.com/klauspost/compress's gzip (the same format, made faster): it
// hides the client's Accept-Encoding from k8s.io/apiserver, which then
// writes plainly, and compresses what it writes.
func WithGzip(h http.Handler) http.Handler {
	if !utilfeature.DefaultFeatureGate.Enabled(features.APIResponseCompression) {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, ok := request.RequestInfoFrom(req.Context())
		if !ok || !info.IsResourceRequest || (info.Verb != "get" && info.Verb != "list") || info.Subresource != "" || !acceptsGzip(req) {
			h.ServeHTTP(w, req)
			return
		}
		req = req.Clone(req.Context())
		req.Header.Del("Accept-Encoding")
		gw := &gzipResponseWriter{ResponseWriter: w}
		defer gw.close()
		h.ServeHTTP(gw, req)
	})
}

// acceptsGzip reports whether k8s.io/apiserver would gzip a response to req
// (responsewriters' responseContentEncodingSupported): one of the
// comma-separated tokens of its Accept-Encoding is exactly "gzip".
func acceptsGzip(req *http.Request) bool {
	for token := range strings.SplitSeq(req.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(token) == "gzip" {
			return true
		}
	}
	return false
}

const (
	// gzipThreshold and streamingFirstWrite are responsewriters'
	// defaultGzipThresholdBytes and firstWriteStreamingThresholdBytes.
	gzipThreshold       = 128 * 1024
	streamingFirstWrite = 4
)

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level
	return w
}}

// gzipResponseWriter decides, as responsewriters' deferredResponseWriter
// does, whether to gzip the response from its first write (or, after a
// first write of a few bytes, from what it buffers), and holds the status
// until then, so that the headers say what it decided.
type gzipResponseWriter struct {
	http.ResponseWriter
	status  int    // from WriteHeader, until written
	decided bool   // the headers are written; out takes the body
	buffer  []byte // a streaming encoder's first writes, until decided
	out     interface{ Write([]byte) (int, error) }
	gz      *gzip.Writer
}

func (w *gzipResponseWriter) WriteHeader(status int) {
	if w.decided {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	if w.status == 0 {
		w.status = status
	}
}

func (w *gzipResponseWriter) Write(p []byte) (int, error) {
	switch {
	case w.decided:
		return w.out.Write(p)
	case w.buffer == nil && len(p) > streamingFirstWrite:
		w.decide(len(p) > gzipThreshold)
		return w.out.Write(p)
	}
	w.buffer = append(w.buffer, p...)
	if len(w.buffer) > gzipThreshold {
		w.decide(true)
		_, err := w.out.Write(w.buffer)
		w.buffer = nil
		return len(p), err
	}
	return len(p), nil
}

// decide writes the headers, with Content-Encoding gzip if compress.
func (w *gzipResponseWriter) decide(compress bool) {
	w.decided = true
	w.out = w.ResponseWriter
	if compress {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		w.gz = gzipWriters.Get().(*gzip.Writer)
		w.gz.Reset(w.ResponseWriter)
		w.out = w.gz
	}
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
}

// close writes what is still buffered or held, and ends the gzip stream.
func (w *gzipResponseWriter) close() {
	if !w.decided {
		if w.buffer == nil && w.status == 0 {
			return // nothing to write
		}
		w.decide(false)
		if len(w.buffer) > 0 {
			_, _ = w.out.Write(w.buffer) // the client's loss, as any failed write
		}
	}
	if w.gz != nil {
		_ = w.gz.Close()
		w.gz.Reset(nil)
		gzipWriters.Put(w.gz)
		w.gz = nil
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *gzipResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
