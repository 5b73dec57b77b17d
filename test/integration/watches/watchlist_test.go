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
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// watchListQuery is framework.WatchListOptions("") as a query string.
const watchListQuery = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"

// TestWatchList streams the current state as ADDED events, then a bookmark
// annotated k8s.io/initial-events-end at a resourceVersion at least that of
// a LIST made before, then the changes, on one stream; also for an empty
// collection. Invalid option combinations get 422 as upstream's.
func TestWatchList(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		for _, tc := range []struct {
			name string
			rv   func(listRV string) string
			n    int
		}{
			{"resourceVersion unset", func(string) string { return "" }, 3},
			{"resourceVersion unset, empty collection", func(string) string { return "" }, 0},
			{"resourceVersion 0", func(string) string { return "0" }, 3},
			{"resourceVersion of the list", func(rv string) string { return rv }, 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ns := framework.CreateNamespace(t, client)
				cms := client.CoreV1().ConfigMaps(ns)
				framework.CreateConfigMaps(t, client, ns, tc.n)
				list, err := cms.List(t.Context(), metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				rv := tc.rv(list.ResourceVersion)
				if rv == "0" {
					// Any state will do for "0": wait until the cache (if
					// any) has the list's, by a LIST that must not be older.
					if _, err := cms.List(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion}); err != nil {
						t.Fatal(err)
					}
				}
				w, err := cms.Watch(t.Context(), framework.WatchListOptions(rv))
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				var initial []string
				for range tc.n {
					if ev := framework.NextEvent(t, w); ev.Type == watch.Added {
						initial = append(initial, framework.ObjectName(t, ev.Object))
					} else {
						t.Fatalf("initial event: got %s, want ADDED", framework.Describe(ev))
					}
				}
				for i, name := range initial {
					if want := list.Items[i].Name; name != want {
						t.Errorf("initial events: got ADDED %v, want the %d listed objects in order", initial, tc.n)
						break
					}
				}
				bookmark := framework.NextEvent(t, w)
				cm, ok := bookmark.Object.(*corev1.ConfigMap)
				if bookmark.Type != watch.Bookmark || !ok || cm.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
					t.Fatalf("after the initial events: got %s %#v, want a BOOKMARK annotated %s", framework.Describe(bookmark), bookmark.Object, metav1.InitialEventsAnnotationKey)
				}
				if got, want := framework.ParseRV(t, cm.ResourceVersion), framework.ParseRV(t, list.ResourceVersion); got < want {
					t.Errorf("initial-events-end bookmark at resourceVersion %d, want >= %d (the list's)", got, want)
				}
				framework.CreateCMIn(t, client, ns, "later", nil)
				events := framework.ExpectEvents(t, w, "ADDED later")
				checkIncreasingAfter(t, events, cm.ResourceVersion)
			})
		}

		t.Run("sendInitialEvents=false", func(t *testing.T) {
			for _, rv := range []string{"", "0"} {
				ns := framework.CreateNamespace(t, client)
				framework.CreateConfigMaps(t, client, ns, 2)
				if rv == "0" {
					// From "0" the changes start at the cache's (any)
					// resourceVersion: wait until it has the two.
					if _, err := client.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{ResourceVersion: framework.ResourceVersionNow(t, client)}); err != nil {
						t.Fatal(err)
					}
				}
				opts := framework.WatchListOptions(rv)
				opts.SendInitialEvents = ptr.To(false)
				w, err := client.CoreV1().ConfigMaps(ns).Watch(t.Context(), opts)
				if err != nil {
					t.Fatal(err)
				}
				framework.CreateCMIn(t, client, ns, "later", nil)
				// No initial state; with "" the changes after etcd's revision at the request.
				if ev := framework.NextChange(t, w); framework.Describe(ev) != "ADDED later" {
					t.Errorf("resourceVersion=%q: got %s, want ADDED later only", rv, framework.Describe(ev))
				}
				w.Stop()
			}
		})

		t.Run("invalid options", func(t *testing.T) {
			cms := client.CoreV1().ConfigMaps("default")
			for _, tc := range []struct {
				name  string
				opts  metav1.ListOptions
				watch bool
			}{
				{"sendInitialEvents without resourceVersionMatch", metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true}, true},
				{"resourceVersionMatch=Exact", metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchExact, ResourceVersion: "1"}, true},
				{"resourceVersionMatch without sendInitialEvents", metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: "1"}, true},
				{"continue", func() metav1.ListOptions { o := framework.WatchListOptions(""); o.Continue = "x"; return o }(), true},
				{"sendInitialEvents on a list", metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, ResourceVersion: "1"}, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var err error
					if tc.watch {
						var w watch.Interface
						if w, err = cms.Watch(t.Context(), tc.opts); err == nil {
							w.Stop()
						}
					} else {
						_, err = cms.List(t.Context(), tc.opts)
					}
					if !apierrors.IsInvalid(err) || err.(apierrors.APIStatus).Status().Code != http.StatusUnprocessableEntity {
						t.Errorf("got %v, want 422 Invalid", err)
					}
				})
			}
		})
	})
}

// TestWithoutConsistentWatchList turns ConsistentWatchList (and with it
// upstream's WatchList) off: a watch-list request is refused with 422, as
// by a server without the feature; plain watches from "" and "0" still send
// the initial state; a client-go informer falls back to LIST+WATCH, syncs
// and sees later writes.
func TestWithoutConsistentWatchList(t *testing.T) {
	// Serial: it sets a feature gate, which is the process's.
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.ConsistentWatchList, false)
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, client := framework.Start(t, path)

		t.Run("watch-list is refused", func(t *testing.T) {
			resp, body := rawGet(t, s, "/api/v1/namespaces/default/configmaps?"+watchListQuery)
			err := statusError(t, body)
			if resp.StatusCode != http.StatusUnprocessableEntity || !apierrors.IsInvalid(err) || !framework.HasCause(err, metav1.CauseTypeForbidden, "sendInitialEvents") {
				t.Errorf("got HTTP %d %s, want 422 Invalid, sendInitialEvents forbidden", resp.StatusCode, body)
			}
		})

		t.Run("plain watches send the initial state", func(t *testing.T) {
			for _, rv := range []string{"", "0"} {
				ns := framework.CreateNamespace(t, client)
				framework.CreateCMIn(t, client, ns, "a", nil)
				if _, err := client.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{ResourceVersion: framework.ResourceVersionNow(t, client)}); err != nil {
					t.Fatal(err)
				}
				w, err := client.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
				if err != nil {
					t.Fatal(err)
				}
				framework.CreateCMIn(t, client, ns, "b", nil)
				framework.ExpectEvents(t, w, "ADDED a", "ADDED b")
				w.Stop()
			}
		})

		t.Run("informers fall back to LIST", func(t *testing.T) {
			if lists := syncInformers(t, s, client); lists < 1 {
				t.Errorf("informer sync issued %d LIST requests, want at least 1 (no watch-list)", lists)
			}
		})
	})
}

// statusError decodes a Status response body.
func statusError(t *testing.T, body []byte) error {
	t.Helper()
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("got %s, want a Status (%v)", body, err)
	}
	return &apierrors.StatusError{ErrStatus: status}
}
