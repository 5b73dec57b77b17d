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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestTooLargeResourceVersion reads at a resourceVersion far ahead of
// etcd's. LIST and GET: 504 Timeout with a ResourceVersionTooLarge cause; as
// upstream, the cache waits ~3 s for the revision and says Retry-After: 1,
// the etcd3 store answers at once without Retry-After. A watch-list: 200
// with one ERROR event carrying that Status (a retry delay of 1 s from the
// cache, 1-4 s from etcd3).
func TestTooLargeResourceVersion(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		s, client := framework.Start(t, path)
		framework.CreateCMNamed(t, client, "x")
		future := fmt.Sprint(framework.ParseRV(t, framework.ResourceVersionNow(t, client)) + 1000000)
		requests := []struct {
			name, path string
			watch      bool
		}{
			{"LIST", "/api/v1/namespaces/default/configmaps?resourceVersion=" + future, false},
			{"LIST NotOlderThan", "/api/v1/namespaces/default/configmaps?resourceVersionMatch=NotOlderThan&resourceVersion=" + future, false},
			{"GET", "/api/v1/namespaces/default/configmaps/x?resourceVersion=" + future, false},
			{"WATCH sendInitialEvents", "/api/v1/namespaces/default/configmaps?" + watchListQuery + "&resourceVersion=" + future, true},
		}
		// The cache path waits ~3 s for each: send them at once.
		type answer struct {
			resp *http.Response
			body []byte
			took time.Duration
		}
		answers := make([]answer, len(requests))
		var wg sync.WaitGroup
		for i, r := range requests {
			wg.Go(func() {
				began := time.Now()
				resp, body, err := get(t.Context(), s, r.path)
				if err != nil {
					t.Errorf("%s: %v", r.name, err)
					return
				}
				answers[i] = answer{resp, body, time.Since(began)}
			})
		}
		wg.Wait()
		for i, r := range requests {
			t.Run(r.name, func(t *testing.T) {
				a := answers[i]
				if a.resp == nil {
					t.Fatal("no answer")
				}
				wantCode, body := http.StatusGatewayTimeout, a.body
				if r.watch {
					wantCode, body = http.StatusOK, errorEventObject(t, a.body)
				}
				err := statusError(t, body)
				if a.resp.StatusCode != wantCode || !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
					t.Fatalf("got HTTP %d %s, want %d, a 504 Timeout Status with a %s cause", a.resp.StatusCode, a.body, wantCode, metav1.CauseTypeResourceVersionTooLarge)
				}
				retry, _ := apierrors.SuggestsClientDelay(err)
				retryAfter := a.resp.Header.Get("Retry-After")
				switch {
				case framework.WatchCacheOn(path) && (retry != 1 || a.took < 2*time.Second):
					t.Errorf("cache path: got a retry delay of %ds after %s, want 1s after waiting ~3s", retry, a.took)
				case framework.WatchCacheOn(path) && !r.watch && retryAfter != "1":
					t.Errorf("cache path: got Retry-After %q, want 1", retryAfter)
				case !framework.WatchCacheOn(path) && !r.watch && (retry != 0 || retryAfter != ""):
					t.Errorf("etcd path: got a retry delay of %ds, Retry-After %q; want none (upstream's etcd3 store sets none)", retry, retryAfter)
				case !framework.WatchCacheOn(path) && r.watch && (retry < 1 || retry > 4):
					t.Errorf("etcd path: got a retry delay of %ds, want 1-4s", retry)
				}
			})
		}
	})
}

// errorEventObject returns the object of the watch event in body, which
// must be a single ERROR event.
func errorEventObject(t *testing.T, body []byte) []byte {
	t.Helper()
	var ev struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != watch.Error {
		t.Fatalf("got %s, want one ERROR event (%v)", body, err)
	}
	return ev.Object
}

// TestListResourceVersion LISTs at resourceVersion "0" with a limit (the
// cache ignores the limit, as upstream's: the whole list, no continue token;
// etcd pages), exactly at an older N, and not older than a newer N (at
// least N: the cache may lag any write after N, so N is the last one's).
func TestListResourceVersion(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		ns := framework.CreateNamespace(t, client)
		cms := client.CoreV1().ConfigMaps(ns)
		framework.CreateConfigMaps(t, client, ns, 3)
		at := framework.ResourceVersionNow(t, client)
		later := framework.CreateCMIn(t, client, ns, "later", nil).ResourceVersion
		names := func(list *corev1.ConfigMapList) string {
			var names []string
			for _, cm := range list.Items {
				names = append(names, cm.Name)
			}
			return strings.Join(names, ",")
		}
		for _, tc := range []struct {
			name string
			opts metav1.ListOptions
			want string
		}{
			{"exact", metav1.ListOptions{ResourceVersion: at, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, "cm-000,cm-001,cm-002"},
			{"not older than", metav1.ListOptions{ResourceVersion: later, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, "cm-000,cm-001,cm-002,later"},
			{"not older than, match unset", metav1.ListOptions{ResourceVersion: later}, "cm-000,cm-001,cm-002,later"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				list, err := cms.List(t.Context(), tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(list); got != tc.want || list.Continue != "" {
					t.Errorf("got %s (continue %q), want %s, no continue", got, list.Continue, tc.want)
				}
			})
		}
		t.Run("0 with limit", func(t *testing.T) {
			var got string
			err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				list, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
				if err != nil {
					return false, err
				}
				got = fmt.Sprintf("%s continue=%t", names(list), list.Continue != "")
				return list.Continue != "" || len(list.Items) == 4, nil // the cache may lag
			})
			want := "cm-000,cm-001,cm-002,later continue=false" // the cache ignores the limit
			if !framework.WatchCacheOn(path) {
				want = "cm-000 continue=true"
			}
			if err != nil || got != want {
				t.Errorf("got %s (%v), want %s", got, err, want)
			}
		})
	})
}

// TestGetResourceVersion GETs with resourceVersion unset (the latest
// state, from etcd), "0" (any state; the cache's, which catches up) and N
// (at least N).
func TestGetResourceVersion(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		cms := client.CoreV1().ConfigMaps("default")
		created := framework.CreateCMIn(t, client, "default", "x", nil)
		updated := framework.UpdateCMLabels(t, client, "default", "x", map[string]string{"v": "2"})

		got, err := cms.Get(t.Context(), "x", metav1.GetOptions{})
		if err != nil || got.ResourceVersion != updated.ResourceVersion {
			t.Fatalf("resourceVersion unset: got %v, %v; want the update at %s", got, err, updated.ResourceVersion)
		}
		got, err = cms.Get(t.Context(), "x", metav1.GetOptions{ResourceVersion: updated.ResourceVersion})
		if err != nil || got.ResourceVersion != updated.ResourceVersion {
			t.Fatalf("resourceVersion=%s: got %v, %v; want the update", updated.ResourceVersion, got, err)
		}
		got, err = cms.Get(t.Context(), "x", metav1.GetOptions{ResourceVersion: created.ResourceVersion})
		if err != nil || framework.ParseRV(t, got.ResourceVersion) < framework.ParseRV(t, created.ResourceVersion) {
			t.Fatalf("resourceVersion=%s: got %v, %v; want a state not older", created.ResourceVersion, got, err)
		}
		waitForGetAtZero(t, func(ctx context.Context) (bool, error) {
			got, err := cms.Get(ctx, "x", metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				return false, err
			}
			return got.ResourceVersion == updated.ResourceVersion && got.Labels["v"] == "2", nil
		})

		if err := cms.Delete(t.Context(), "x", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Get(t.Context(), "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("resourceVersion unset after delete: got %v, want 404", err)
		}
		now := framework.ResourceVersionNow(t, client)
		if _, err := cms.Get(t.Context(), "x", metav1.GetOptions{ResourceVersion: now}); !apierrors.IsNotFound(err) {
			t.Errorf("resourceVersion=%s after delete: got %v, want 404", now, err)
		}
		waitForGetAtZero(t, func(ctx context.Context) (bool, error) {
			_, err := cms.Get(ctx, "x", metav1.GetOptions{ResourceVersion: "0"})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	})
}

// waitForGetAtZero polls a GET at resourceVersion 0, which may answer from
// a cache that has not caught up yet, until it gives the wanted answer.
func waitForGetAtZero(t *testing.T, f wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, f); err != nil {
		t.Fatalf("GET at resourceVersion 0: %v", err)
	}
}
