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
	"fmt"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestCachedListEncodingMatchesEtcd lists at exact resourceVersions from a
// server with a watch cache (whose LIST responses reuse the cached items'
// encodings) and from one without, on one etcd: the response bodies must
// be byte for byte the same, in JSON and protobuf, the first time and once
// the encodings are cached, and gzipped (decompressed) for a list over the
// gzip threshold.
func TestCachedListEncodingMatchesEtcd(t *testing.T) {
	t.Parallel()
	external := framework.ExternalEtcd(t, 0)
	cached := testserver.Start(t, external)
	plain := testserver.Start(t, external, func(o *server.Options) { o.WatchCache = false })
	client := kubernetes.NewForConfigOrDie(cached.Config)

	created := framework.CreateConfigMaps(t, client, "default", 12)
	for _, cm := range created[:4] { // labelled, after the first list's RV below
		patch := []byte(`{"metadata":{"labels":{"team":"a"},"annotations":{"html":"a<b>&c"}}}`)
		if _, err := client.CoreV1().ConfigMaps("default").Patch(t.Context(), cm.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A namespace whose list is over the 128 KiB from which the server
	// gzips it for a client that accepts gzip (client-go's does).
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "large"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"data": strings.Repeat("x<&>", 1<<10)}}
		if _, err := client.CoreV1().ConfigMaps("large").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}) // the cache has seen every write
	if err != nil {
		t.Fatal(err)
	}
	first, now := created[len(created)-1].ResourceVersion, list.ResourceVersion
	page, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{Limit: 5, ResourceVersion: first})
	if err != nil {
		t.Fatal(err)
	}

	queries := map[string]url.Values{
		"exact now":            {"resourceVersion": {now}, "resourceVersionMatch": {"Exact"}},
		"exact before patches": {"resourceVersion": {first}, "resourceVersionMatch": {"Exact"}},
		"first page":           {"resourceVersion": {first}, "limit": {"5"}},
		"continuation":         {"continue": {page.Continue}, "limit": {"5"}},
		"selected":             {"resourceVersion": {now}, "resourceVersionMatch": {"Exact"}, "labelSelector": {"team"}},
	}
	for _, accept := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		for name, query := range queries {
			for _, path := range []string{"/api/v1/namespaces/default/configmaps", "/api/v1/configmaps"} {
				if name == "continuation" && path == "/api/v1/configmaps" {
					continue // the token is the namespace's
				}
				want := getAs(t, plain, path, query, accept)
				for round := range 2 {
					if got := getAs(t, cached, path, query, accept); got != want {
						t.Errorf("%s %s (%s), round %d: the watch cache's body differs from etcd's:\n got %q\nwant %q", path, name, accept, round, got, want)
					}
				}
			}
		}
		// Gzipped, decompressed by the client.
		path, query := "/api/v1/namespaces/large/configmaps", url.Values{"resourceVersion": {now}, "resourceVersionMatch": {"Exact"}}
		want, wantGzipped := getGzipped(t, plain, path, query, accept)
		got, gzipped := getGzipped(t, cached, path, query, accept)
		if !wantGzipped || !gzipped {
			t.Errorf("the large list (%s, %d bytes): gzipped %v by the watch cache, %v over etcd; want both", accept, len(want), gzipped, wantGzipped)
		}
		if got != want {
			t.Errorf("the large list (%s), gzipped: the watch cache's body differs from etcd's (%d and %d bytes)", accept, len(got), len(want))
		}
	}
}

// getGzipped GETs path?query from s accepting accept and gzip, as
// client-go does; it returns the body, decompressed, and whether the
// server gzipped it.
func getGzipped(t *testing.T, s *testserver.Server, path string, query url.Values, accept string) (string, bool) {
	t.Helper()
	c, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return framework.FetchGzipped(t, c, fmt.Sprintf("%s%s?%s", s.Config.Host, path, query.Encode()), accept)
}

// getAs GETs path?query from s, accepting accept.
func getAs(t *testing.T, s *testserver.Server, path string, query url.Values, accept string) string {
	t.Helper()
	c, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return framework.Fetch(t, c, fmt.Sprintf("%s%s?%s", s.Config.Host, path, query.Encode()), accept)
}
