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

package lists

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/scheme"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

func TestListChunkingPagesAtOneResourceVersion(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		framework.CreateConfigMaps(t, client, "default", 25)
		cms := client.CoreV1().ConfigMaps("default")

		var names []string
		var remaining []*int64
		rv := ""
		opts := metav1.ListOptions{Limit: 10}
		for page := 0; ; page++ {
			list, err := cms.List(t.Context(), opts)
			if err != nil {
				t.Fatalf("page %d: %v", page, err)
			}
			if len(list.Items) > 10 {
				t.Fatalf("page %d: got %d items, want at most 10", page, len(list.Items))
			}
			if page == 0 {
				rv = list.ResourceVersion
				// Written after the first page: later pages must not show it.
				late := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-late"}}
				if _, err := cms.Create(t.Context(), late, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := cms.Delete(t.Context(), "cm-000", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			} else if list.ResourceVersion != rv {
				t.Errorf("page %d: got resourceVersion %s, want the first page's %s", page, list.ResourceVersion, rv)
			}
			for _, cm := range list.Items {
				names = append(names, cm.Name)
			}
			remaining = append(remaining, list.RemainingItemCount)
			if list.Continue == "" {
				break
			}
			opts.Continue = list.Continue
		}
		if len(names) != 25 || names[0] != "cm-000" || names[24] != "cm-024" {
			t.Errorf("got %d items %v, want cm-000..cm-024 as of the first page", len(names), names)
		}
		wantRemaining := []int64{15, 5}
		for i, want := range wantRemaining {
			if remaining[i] == nil || *remaining[i] != want {
				t.Errorf("page %d: got remainingItemCount %v, want %d", i, remaining[i], want)
			}
		}
		if last := remaining[len(remaining)-1]; last != nil {
			t.Errorf("last page: got remainingItemCount %d, want none", *last)
		}
	})
}

func TestListChunkingErrors(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path)
		framework.CreateConfigMaps(t, client, "default", 3)
		first, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		token := first.Continue
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for _, tc := range []struct {
			name     string
			opts     metav1.ListOptions
			wantCode int32
		}{
			{"continue with resourceVersion", metav1.ListOptions{Continue: token, ResourceVersion: first.ResourceVersion}, http.StatusBadRequest},
			{"not base64", metav1.ListOptions{Continue: "!!!not-base64!!!"}, http.StatusBadRequest},
			{"not JSON", metav1.ListOptions{Continue: enc("{nope")}, http.StatusBadRequest},
			{"unknown version", metav1.ListOptions{Continue: enc(`{"v":"meta.k8s.io/v2","rv":5,"start":"cm-001\u0000"}`)}, http.StatusBadRequest},
			{"zero rv", metav1.ListOptions{Continue: enc(`{"v":"meta.k8s.io/v1","rv":0,"start":"cm-001"}`)}, http.StatusBadRequest},
			{"empty start", metav1.ListOptions{Continue: enc(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`)}, http.StatusBadRequest},
			{"path traversal", metav1.ListOptions{Continue: enc(`{"v":"meta.k8s.io/v1","rv":5,"start":"../secrets/default/x"}`)}, http.StatusBadRequest},
			{"double slash", metav1.ListOptions{Continue: enc(`{"v":"meta.k8s.io/v1","rv":5,"start":"//x"}`)}, http.StatusBadRequest},
			{"bad resourceVersion", metav1.ListOptions{ResourceVersion: "abc", Limit: 1}, http.StatusBadRequest},
			{"negative limit", metav1.ListOptions{Limit: -1}, 0},
			{"continue with resourceVersion 0 is accepted", metav1.ListOptions{Continue: token, ResourceVersion: "0"}, 0},
			{"future rv in token", metav1.ListOptions{Continue: enc(`{"v":"meta.k8s.io/v1","rv":99999999,"start":"cm-001\u0000"}`)}, http.StatusGatewayTimeout},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// One request: client-go would retry the 504 (it has Retry-After) for 10 s.
				err := client.CoreV1().RESTClient().Get().Namespace("default").Resource("configmaps").
					VersionedParams(&tc.opts, scheme.ParameterCodec).MaxRetries(0).Do(t.Context()).Into(&corev1.ConfigMapList{})
				var code int32
				if err != nil {
					status, ok := err.(apierrors.APIStatus)
					if !ok {
						t.Fatalf("got %v, want a Status error", err)
					}
					code = status.Status().Code
				}
				if code != tc.wantCode {
					t.Errorf("got code %d (%v), want %d", code, err, tc.wantCode)
				}
			})
		}
	})
}

func TestListChunkingCompactedContinueGets410WithFreshToken(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		// A compactor that never fires in the test, but watches etcd's
		// compaction key as every server's does, so the server learns of
		// CompactEtcd's compaction (with none, as upstream, a watch cache
		// keeps serving tokens from its snapshots after a compaction).
		s, client := framework.Start(t, path, func(o *server.Options) { o.EtcdCompactionInterval = time.Hour })
		framework.CreateConfigMaps(t, client, "default", 5)
		cms := client.CoreV1().ConfigMaps("default")
		first, err := cms.List(t.Context(), metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		// Move etcd past the list's revision and compact it away.
		if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-new"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.CompactEtcd(t, s)

		// The watch cache serves the token from its snapshot until it has
		// seen the compaction (it reads the revision every second).
		if pollErr := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err = cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: first.Continue})
			return err != nil, nil
		}); pollErr != nil {
			t.Fatalf("the continuation never failed: %v", pollErr)
		}
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("got %v, want 410 Gone", err)
		}
		status := err.(apierrors.APIStatus).Status()
		if status.Code != http.StatusGone || status.ListMeta.Continue == "" {
			t.Fatalf("got code %d continue %q, want 410 with a fresh continue token", status.Code, status.ListMeta.Continue)
		}
		// The fresh token continues, inconsistently, at the latest revision.
		var names []string
		opts := metav1.ListOptions{Limit: 2, Continue: status.ListMeta.Continue}
		for {
			list, err := cms.List(t.Context(), opts)
			if err != nil {
				t.Fatalf("continuing with the fresh token: %v", err)
			}
			for _, cm := range list.Items {
				names = append(names, cm.Name)
			}
			if list.Continue == "" {
				break
			}
			opts.Continue = list.Continue
		}
		if want := "cm-002,cm-003,cm-004,cm-new"; strings.Join(names, ",") != want {
			t.Errorf("got %v, want %s", names, want)
		}
	})
}

func TestListChunkingGateOffIgnoresLimit(t *testing.T) {
	// Serial: it sets a feature gate, which is the process's.
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.APIListChunking, false)
		_, client := framework.Start(t, path)
		framework.CreateConfigMaps(t, client, "default", 5)
		list, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 5 || list.Continue != "" || list.RemainingItemCount != nil {
			t.Errorf("got %d items, continue %q, remaining %v; want all 5 items, no token", len(list.Items), list.Continue, list.RemainingItemCount)
		}
	})
}

// TestPeriodicCompactionExpiresOldContinueTokens runs the server's own
// compactor (--etcd-compaction-interval) and polls until a continue token
// from before the compaction gets 410.
func TestPeriodicCompactionExpiresOldContinueTokens(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		_, client := framework.Start(t, path, func(o *server.Options) { o.EtcdCompactionInterval = 200 * time.Millisecond })
		framework.CreateConfigMaps(t, client, "default", 3)
		cms := client.CoreV1().ConfigMaps("default")
		first, err := cms.List(t.Context(), metav1.ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			// The compactor compacts what it saw one interval ago: keep the revision moving.
			i++
			if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tick-%d", i)}}, metav1.CreateOptions{}); err != nil {
				return false, err
			}
			_, err := cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: first.Continue})
			return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), nil
		})
		if err != nil {
			t.Fatalf("the first page's revision was never compacted: %v", err)
		}
	})
}
