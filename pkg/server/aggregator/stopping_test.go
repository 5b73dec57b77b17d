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

package aggregator

import (
	"net/http"
	"net/http/httptest"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// TestRefusedOnceStopping: the aggregator's loopback requests reach the
// server until the server stops, then fail as refused connections, which
// client-go's reflectors retry quietly (isWatchErrorRetriable).
func TestRefusedOnceStopping(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(server.Close)
	stopping := make(chan struct{})
	client, err := rest.HTTPClientFor(refusedOnceStopping(&rest.Config{Host: server.URL}, stopping))
	if err != nil {
		t.Fatal(err)
	}
	get := func() error {
		resp, err := client.Get(server.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("before the stop: %v, want the server's answer", err)
	}
	close(stopping)
	if err := get(); !utilnet.IsConnectionRefused(err) {
		t.Errorf("after the stop: got %v, want a refused connection", err)
	}
}
