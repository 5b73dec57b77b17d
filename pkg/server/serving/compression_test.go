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
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// chunkEncoder encodes any object as its chunks, one write each.
type chunkEncoder [][]byte

func (c chunkEncoder) Encode(_ runtime.Object, w io.Writer) error {
	for _, chunk := range c {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

func (chunkEncoder) Identifier() runtime.Identifier { return "chunks" }

// response is what a client sees of a response, its body decompressed.
type response struct {
	Status                      int
	ContentType, Encoding, Vary string
	Body                        string
}

func responseOf(t *testing.T, rec *httptest.ResponseRecorder) response {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
	return response{Status: rec.Code, ContentType: rec.Header().Get("Content-Type"), Encoding: rec.Header().Get("Content-Encoding"),
		Vary: rec.Header().Get("Vary"), Body: string(body)}
}

// TestGzipIsUpstreams: a response k8s.io/apiserver writes through WithGzip
// is the one it writes alone, compressed or not as it would compress it
// (by the size of the first write, or of what a streaming encoder's small
// first writes add up to), whatever the client accepts.
func TestGzipIsUpstreams(t *testing.T) {
	chunk := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	many := func(n, size int) [][]byte {
		chunks := [][]byte{[]byte("{")}
		for i := range n {
			chunks = append(chunks, chunk(size, byte('a'+i%26)))
		}
		return chunks
	}
	encodings := map[string][][]byte{
		"one large write":               {chunk(200<<10, 'x')},
		"one write at the threshold":    {chunk(128<<10, 'x')},
		"one small write":               {chunk(1000, 'x')},
		"streaming, over the threshold": many(300, 1000),
		"streaming, under it":           many(10, 1000),
		"streaming, a byte":             {[]byte("{")},
	}
	for name, chunks := range encodings {
		for _, accept := range []string{"gzip", "deflate, gzip", "gzip;q=1", "br", ""} {
			t.Run(fmt.Sprintf("%s/%q", name, accept), func(t *testing.T) {
				serve := func(w http.ResponseWriter, req *http.Request) {
					responsewriters.SerializeObject("application/json", chunkEncoder(chunks), w, req, http.StatusOK, &metav1.Status{})
				}
				req := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
				req = req.WithContext(request.WithRequestInfo(req.Context(), &request.RequestInfo{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Resource: "configmaps"}))
				if accept != "" {
					req.Header.Set("Accept-Encoding", accept)
				}
				alone, through := httptest.NewRecorder(), httptest.NewRecorder()
				serve(alone, req)
				WithGzip(http.HandlerFunc(serve)).ServeHTTP(through, req)
				want, got := responseOf(t, alone), responseOf(t, through)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("through WithGzip (-alone +through):\n%s", diff)
				}
				large := name == "one large write" || name == "streaming, over the threshold"
				if gzipped := got.Encoding == "gzip"; gzipped != (large && accept != "br" && accept != "" && accept != "gzip;q=1") {
					t.Errorf("gzipped: %v", gzipped)
				}
				if want.Body != string(bytes.Join(chunks, nil)) {
					t.Errorf("the body is not what the encoder wrote")
				}
			})
		}
	}
}
