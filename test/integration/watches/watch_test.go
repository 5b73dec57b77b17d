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

package watches

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestWatchInitialState watches with resourceVersion unset and "0": the
// current state as ADDED events, then the changes, in order. (With the
// WatchList gate on the HTTP layer makes these sendInitialEvents=true
// watches; the events are the same.)
func TestWatchInitialState(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		for _, rv := range []string{"", "0"} {
			t.Run("resourceVersion="+strconv.Quote(rv), func(t *testing.T) {
				ns := framework.CreateNamespace(t, client)
				cms := client.CoreV1().ConfigMaps(ns)
				framework.CreateConfigMaps(t, client, ns, 2)
				w, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				var initial []string
				for range 2 {
					ev := framework.NextEvent(t, w)
					if ev.Type != watch.Added {
						t.Fatalf("initial event: got %s, want ADDED", framework.Describe(ev))
					}
					initial = append(initial, framework.ObjectName(t, ev.Object))
				}
				slices.Sort(initial)
				if want := []string{"cm-000", "cm-001"}; !slices.Equal(initial, want) {
					t.Errorf("initial events: got ADDED %v, want %v", initial, want)
				}

				framework.CreateCMIn(t, client, ns, "later", nil)
				framework.UpdateCMLabels(t, client, ns, "cm-000", map[string]string{"x": "y"})
				if err := cms.Delete(t.Context(), "cm-001", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				framework.ExpectEvents(t, w, "ADDED later", "MODIFIED cm-000", "DELETED cm-001")
			})
		}
	})
}

// TestWatchFromResourceVersion watches from a resourceVersion N: only the
// changes after N, in order, each with a greater resourceVersion; with a
// label selector an update that moves an object into the selection arrives
// as ADDED and one that moves it out as DELETED, carrying the previous
// object at the update's resourceVersion.
func TestWatchFromResourceVersion(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		ns := framework.CreateNamespace(t, client)
		cms := client.CoreV1().ConfigMaps(ns)
		framework.CreateCMIn(t, client, ns, "before", map[string]string{"app": "a"}) // must not be replayed
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		all, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer all.Stop()
		selected, err := cms.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "app=a"})
		if err != nil {
			t.Fatal(err)
		}
		defer selected.Stop()

		framework.CreateCMIn(t, client, ns, "x", nil)                                           // not selected
		framework.CreateCMIn(t, client, ns, "y", map[string]string{"app": "a"})                 // selected
		framework.UpdateCMLabels(t, client, ns, "x", map[string]string{"app": "a"})             // moves in
		movedOut := framework.UpdateCMLabels(t, client, ns, "y", map[string]string{"app": "b"}) // moves out
		if err := cms.Delete(t.Context(), "x", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.CreateCMIn(t, client, ns, "sentinel", map[string]string{"app": "a"})

		events := framework.ExpectEvents(t, all, "ADDED x", "ADDED y", "MODIFIED x", "MODIFIED y", "DELETED x", "ADDED sentinel")
		checkIncreasingAfter(t, events, list.ResourceVersion)
		events = framework.ExpectEvents(t, selected, "ADDED y", "ADDED x", "DELETED y", "DELETED x", "ADDED sentinel")
		checkIncreasingAfter(t, events, list.ResourceVersion)
		// The DELETED event of an object moved out of the selection carries
		// the object as it was, at the resourceVersion of the update.
		if gone, ok := events[2].Object.(*corev1.ConfigMap); !ok || gone.Labels["app"] != "a" || gone.ResourceVersion != movedOut.ResourceVersion {
			t.Errorf("DELETED y: got %#v, want y labelled app=a at resourceVersion %s", events[2].Object, movedOut.ResourceVersion)
		}
	})
}

// TestWatchTooOldResourceVersion watches from a resourceVersion written
// before the server (re)started. Before etcd compacts it, both paths serve
// the changes since from etcd's history (the cache hands a watch older
// than its own history to etcd: EfficientWatchResumption; with the gate off
// it answers 410 as upstream's, see
// TestWatchFromBeforeARestartWithoutEfficientWatchResumption). Once etcd
// has compacted it, both answer 200 with one ERROR event, a 410 Expired
// Status, and end the stream.
func TestWatchTooOldResourceVersion(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		first, client := framework.Start(t, path)
		ns := framework.CreateNamespace(t, client)
		old := framework.CreateCMIn(t, client, ns, "old", nil)
		framework.CreateCMIn(t, client, ns, "newer", nil)
		if err := first.Stop(); err != nil {
			t.Fatal(err)
		}
		s, client := framework.Start(t, path, func(o *server.Options) {
			o.DataDir = first.DataDir
			o.EtcdCompactionInterval = 0
		})
		// One more write, so that compacting at the current revision
		// removes newer's, the first revision after old.
		framework.CreateCMIn(t, client, ns, "after-restart", nil)
		query := fmt.Sprintf("watch=true&resourceVersion=%s", old.ResourceVersion)

		t.Run("before compaction", func(t *testing.T) {
			resp, events := rawWatch(t, s, ns, query)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("got HTTP %d, want 200", resp.StatusCode)
			}
			// etcd still has the revisions after old.
			framework.ExpectEvents(t, events, "ADDED newer", "ADDED after-restart")
		})

		t.Run("after compaction", func(t *testing.T) {
			framework.CompactEtcd(t, s)
			resp, events := rawWatch(t, s, ns, query)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("got HTTP %d, want 200", resp.StatusCode)
			}
			ev := framework.NextEvent(t, events)
			err := framework.ErrorOf(ev)
			if !apierrors.IsResourceExpired(err) || err.(apierrors.APIStatus).Status().Code != http.StatusGone {
				t.Fatalf("got %s, want an ERROR event with 410 Expired", framework.Describe(ev))
			}
			framework.ExpectEnd(t, events)
		})
	})
}

// TestWatchFromBeforeARestartWithoutEfficientWatchResumption: with the
// gate off the cache's history starts where the cache started, as
// upstream's, so a watch from before a restart gets 410 Expired.
func TestWatchFromBeforeARestartWithoutEfficientWatchResumption(t *testing.T) {
	// Serial: it sets a feature gate, which is the process's.
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EfficientWatchResumption, false)
	first, client := framework.Start(t)
	ns := framework.CreateNamespace(t, client)
	old := framework.CreateCMIn(t, client, ns, "old", nil)
	framework.CreateCMIn(t, client, ns, "newer", nil)
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	s, _ := framework.Start(t, func(o *server.Options) { o.DataDir = first.DataDir })
	_, events := rawWatch(t, s, ns, "watch=true&resourceVersion="+old.ResourceVersion)
	if ev := framework.NextEvent(t, events); !apierrors.IsResourceExpired(framework.ErrorOf(ev)) {
		t.Fatalf("got %s, want an ERROR event with 410 Expired", framework.Describe(ev))
	}
	framework.ExpectEnd(t, events)
}

// checkIncreasingAfter checks that events' resourceVersions are increasing and after rv.
func checkIncreasingAfter(t *testing.T, events []watch.Event, rv string) {
	t.Helper()
	last := framework.ParseRV(t, rv)
	for _, ev := range events {
		got := framework.ParseRV(t, framework.ResourceVersionOf(t, ev.Object))
		if got <= last {
			t.Errorf("%s: resourceVersion %d, want > %d", framework.Describe(ev), got, last)
		}
		last = got
	}
}

// rawGet GETs path (with its query) from s as JSON over plain HTTP and
// returns the response and its whole body.
func rawGet(t *testing.T, s *testserver.Server, path string) (*http.Response, []byte) {
	t.Helper()
	resp, body, err := get(t.Context(), s, path)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// get is rawGet for any goroutine.
func get(ctx context.Context, s *testserver.Server, path string) (*http.Response, []byte, error) {
	httpClient, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Config.Host+path, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// rawWatch opens GET /api/v1/namespaces/ns/configmaps?query as JSON over
// plain HTTP and returns the response (status, headers) and its events,
// decoded one line at a time; the result channel closes when the body
// ends. The body is closed when the test ends.
func rawWatch(t *testing.T, s *testserver.Server, ns, query string) (*http.Response, watch.Interface) {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/api/v1/namespaces/%s/configmaps?%s", s.Config.Host, ns, query), nil)
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &rawEvents{result: make(chan watch.Event), stop: cancel}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	go w.decode(ctx, resp.Body)
	return resp, w
}

// rawEvents is a watch.Interface over a JSON watch response body.
type rawEvents struct {
	result chan watch.Event
	stop   context.CancelFunc
}

func (w *rawEvents) ResultChan() <-chan watch.Event { return w.result }
func (w *rawEvents) Stop()                          { w.stop() }

// decode sends each event in body, a configmap or (for ERROR) a Status, to
// w.result, and closes it when the body ends.
func (w *rawEvents) decode(ctx context.Context, body io.Reader) {
	defer close(w.result)
	lines := bufio.NewScanner(body)
	lines.Buffer(nil, 16<<20)
	for lines.Scan() {
		var raw struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &raw); err != nil {
			return
		}
		var obj runtime.Object = &corev1.ConfigMap{}
		if raw.Type == watch.Error {
			obj = &metav1.Status{}
		}
		if err := json.Unmarshal(raw.Object, obj); err != nil {
			return
		}
		select {
		case w.result <- watch.Event{Type: raw.Type, Object: obj}:
		case <-ctx.Done():
			return
		}
	}
}
