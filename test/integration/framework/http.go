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

package framework

import (
	"bufio"
	"encoding/binary"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Fetch GETs url with c, accepting accept, and returns the body (of a
// watch, its first event); it fails the test unless the answer is 200.
func Fetch(t *testing.T, c *http.Client, url, accept string) string {
	t.Helper()
	resp := get(t, c, url, accept)
	defer resp.Body.Close()
	if !strings.Contains(url, "watch=true") {
		return readAll(t, resp)
	}
	// A watch never ends by itself: read its first event only.
	r := bufio.NewReader(resp.Body)
	if strings.Contains(accept, "protobuf") {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			t.Fatal(err)
		}
		frame := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, frame); err != nil {
			t.Fatal(err)
		}
		return string(frame)
	}
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// FetchGzipped is Fetch of a response that is not a watch, with a client
// whose transport asks for gzip and decompresses (as client-go's does); it
// also reports whether the server gzipped the body.
func FetchGzipped(t *testing.T, c *http.Client, url, accept string) (string, bool) {
	t.Helper()
	resp := get(t, c, url, accept)
	defer resp.Body.Close()
	return readAll(t, resp), resp.Uncompressed
}

// get GETs url with c, accepting accept; it fails the test unless the
// answer is 200. The caller closes the body.
func get(t *testing.T, c *http.Client, url, accept string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET %s (%s): %d %s", url, accept, resp.StatusCode, body)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
