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

package encoding_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
)

// startServer runs a whole server on dir until the test ends or stop is called.
func startServer(t *testing.T, dir string, watchCache bool) (cfg *rest.Config, stop func()) {
	t.Helper()
	o := server.NewOptions()
	o.DataDir, o.SecurePort, o.EtcdUnsafeNoFsync, o.WatchCache = dir, 0, true, watchCache
	c, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.Complete().New(ctx)
	if err != nil {
		cancel()
		c.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- errors.Join(s.Run(ctx), c.Close()) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		}
	}
	t.Cleanup(stop)
	readyCtx, readyCancel := context.WithTimeout(ctx, time.Minute)
	defer readyCancel()
	if err := s.WaitReady(readyCtx); err != nil {
		t.Fatal(err)
	}
	return rest.CopyConfig(s.Admin), stop
}

// TestKeptWatchEventsAreTheEtcdPaths: the initial events of a watch from
// resourceVersion 0, served by the watch cache from kept encodings, are
// byte for byte those the same server sends with --watch-cache=false,
// where upstream's watch encoder encodes objects read from etcd, in JSON
// and in protobuf.
func TestKeptWatchEventsAreTheEtcdPaths(t *testing.T) {
	dir := t.TempDir()
	cfg, stop := startServer(t, dir, true)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const ns = "enc"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 3 {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("s", i), Annotations: map[string]string{"a": "<b>&\u2028é"}},
			Data: map[string][]byte{"k": bytes.Repeat([]byte{0, 0xff, '\n', byte(i)}, 100000*i)}}
		if _, err := client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", i)}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("1.5")}}}}}}
		created, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = created.ResourceVersion
	}
	// A LIST at the last write's resourceVersion returns once each cache
	// has seen it, so the watches below get all three as initial events
	// (not some as later events, which take another path).
	if _, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{ResourceVersion: last}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: last}); err != nil {
		t.Fatal(err)
	}
	requests := []struct{ resource, accept string }{
		{"secrets", runtime.ContentTypeJSON}, {"secrets", runtime.ContentTypeProtobuf},
		{"pods", runtime.ContentTypeJSON}, {"pods", runtime.ContentTypeProtobuf},
	}
	events, frames := encoding.KeptEventsWritten.Load(), encoding.KeptFramesWritten.Load()
	cached := make([][][]byte, len(requests))
	for i, r := range requests {
		cached[i] = initialEvents(t, cfg, "/api/v1/namespaces/"+ns+"/"+r.resource, r.accept, 3)
	}
	if n := encoding.KeptEventsWritten.Load() - events; n != 3*int64(len(requests)) {
		t.Errorf("%d events written from kept encodings, want %d", n, 3*len(requests))
	}
	if n := encoding.KeptFramesWritten.Load() - frames; n != 3*2 { // the protobuf ones
		t.Errorf("%d events written straight from kept protobuf encodings framed as the event, want %d", n, 3*2)
	}
	stop()

	cfg, _ = startServer(t, dir, false)
	for i, r := range requests {
		fromEtcd := initialEvents(t, cfg, "/api/v1/namespaces/"+ns+"/"+r.resource, r.accept, 3)
		for j := range fromEtcd {
			if !bytes.Equal(cached[i][j], fromEtcd[j]) {
				t.Errorf("%s as %s, event %d: the cache sent\n%q\nthe etcd path sends\n%q", r.resource, r.accept, j, encoding.Trim(cached[i][j]), encoding.Trim(fromEtcd[j]))
			}
		}
	}
}

// initialEvents reads the first n events of a watch of the collection at
// path from resourceVersion 0, as raw frames.
func initialEvents(t *testing.T, cfg *rest.Config, path, accept string, n int) [][]byte {
	t.Helper()
	path += "?watch=1&resourceVersion=0"
	resp := getRaw(t, cfg, path, accept)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch %s: %s", path, resp.Status)
	}
	r := bufio.NewReader(resp.Body)
	var frames [][]byte
	for range n {
		var frame []byte
		var err error
		if accept == runtime.ContentTypeProtobuf {
			var size uint32
			if err := binary.Read(r, binary.BigEndian, &size); err != nil {
				t.Fatal(err)
			}
			frame = make([]byte, size)
			_, err = io.ReadFull(r, frame)
		} else {
			frame, err = r.ReadBytes('\n')
		}
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, frame)
	}
	return frames
}

// getRaw GETs path from cfg's server accepting accept, with the header
// pairs given (no Accept-Encoding: no compression), and leaves the body as
// sent; the caller closes it.
func getRaw(t *testing.T, cfg *rest.Config, path, accept string, header ...string) *http.Response {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.DisableCompression = true
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
