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

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestEventCounterResumes checks that a watcher whose stream the server
// ends early watches again from the last event's resourceVersion, and that
// an ERROR event ends it.
func TestEventCounterResumes(t *testing.T) {
	var mu sync.Mutex
	var rvs []string // the resourceVersion of each watch request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rv := r.URL.Query().Get("resourceVersion")
		mu.Lock()
		rvs = append(rvs, rv)
		mu.Unlock()
		// Three events from rv on, then the stream ends.
		var from int
		fmt.Sscan(rv, &from)
		for n := from + 1; n <= from+3; n++ {
			fmt.Fprintf(w, `{"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"bench-00000","resourceVersion":"%d"}}}`+"\n", n)
		}
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := newEventCounter(1, 7)
	defer c.close()
	if err := c.open(context.Background(), client.CoreV1().RESTClient(), "10"); err != nil {
		t.Fatal(err)
	}
	if err := waitGroupFor(context.Background(), &c.done, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := c.total(); got != 7 {
		t.Errorf("got %d events, want 7", got)
	}
	if err := c.err(); err != nil {
		t.Errorf("err: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(rvs) != "[10 13 16]" || c.resumed.Load() != 2 {
		t.Errorf("watched at resourceVersions %v, %d resumed; want [10 13 16], 2", rvs, c.resumed.Load())
	}
}

func TestEventCounterError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"type":"ERROR","object":{"kind":"Status","code":410}}`)
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := newEventCounter(1, 5)
	defer c.close()
	if err := c.open(context.Background(), client.CoreV1().RESTClient(), "10"); err != nil {
		t.Fatal(err)
	}
	if err := waitGroupFor(context.Background(), &c.done, time.Minute); err != nil {
		t.Fatal(err)
	}
	if c.err() == nil || c.resumed.Load() != 0 {
		t.Errorf("err %v, %d resumed; want an error and none", c.err(), c.resumed.Load())
	}
}
