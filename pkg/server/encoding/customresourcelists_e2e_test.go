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
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server/encoding"
)

// TestCustomResourceListsAreApiextensions: LISTs of custom resources that
// CustomResourceLists serves from kept encodings are byte for byte what
// apiextensions-apiserver answers over etcd (--watch-cache=false, on the
// same data), for both versions of a CRD, selections, pages and the
// cluster-wide list, plain and gzipped (decompressed); the requests it leaves to apiextensions-apiserver
// (tables, a deprecated version) are not counted as its own; and after a
// change of the CRD's schema it serves from the storage made for the new
// schema, whose defaults the objects then carry.
func TestCustomResourceListsAreApiextensions(t *testing.T) {
	dir := t.TempDir()
	cfg, stop := startServer(t, dir, true)
	ctx := t.Context()
	crd := widgetsCRD()
	crds := apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widgets := dynamic.NewForConfigOrDie(cfg).Resource(gvr)
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := widgets.Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatal("the CRD is not served:", err)
	}
	// Each namespace's 6 widgets are over the 128 KiB from which a list is
	// gzipped for a client that accepts it; one widget or a page of 2 not.
	padding := strings.Repeat("x", 24<<10)
	for i := range 12 {
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprint("w", i), "namespace": []string{"default", "other"}[i%2], "labels": map[string]any{"even": fmt.Sprint(i%2 == 0)}},
			"spec":     map[string]any{"text": "a<b>&c\u2028é" + padding, "size": int64(i)},
		}}
		created, err := widgets.Namespace(w.GetNamespace()).Create(ctx, w, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = created.GetResourceVersion()
	}
	page, err := widgets.Namespace("default").List(ctx, metav1.ListOptions{Limit: 2, ResourceVersion: last})
	if err != nil {
		t.Fatal(err)
	}

	exact := url.Values{"resourceVersion": {last}, "resourceVersionMatch": {"Exact"}}
	with := func(v url.Values, kv ...string) url.Values {
		v = cloneValues(v)
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	watches := []string{"/apis/example.com/v1/namespaces/default/widgets", "/apis/example.com/v2/namespaces/other/widgets"}
	requests := []string{
		"/apis/example.com/v1/namespaces/default/widgets?" + exact.Encode(),
		"/apis/example.com/v1/widgets?" + exact.Encode(),
		"/apis/example.com/v2/namespaces/other/widgets?" + exact.Encode(),
		"/apis/example.com/v1/widgets?" + with(exact, "labelSelector", "even=true").Encode(),
		"/apis/example.com/v1/widgets?" + with(exact, "fieldSelector", "spec.size=4").Encode(),
		"/apis/example.com/v1/widgets?" + with(exact, "fieldSelector", "metadata.name=w3").Encode(),
		"/apis/example.com/v1/namespaces/default/widgets?" + url.Values{"resourceVersion": {last}, "limit": {"2"}}.Encode(),
		"/apis/example.com/v1/namespaces/default/widgets?" + url.Values{"continue": {page.GetContinue()}, "limit": {"2"}}.Encode(),
		"/apis/example.com/v1/widgets?" + with(exact, "fieldSelector", "spec.nope=1").Encode(), // 400, from the handler
	}
	served := encoding.CustomResourceListsServed.Load()
	cached := make([]string, len(requests))
	for i, r := range requests {
		cached[i] = get(t, cfg, r, "application/json")
	}
	if n := encoding.CustomResourceListsServed.Load() - served; n != int64(len(requests)) {
		t.Errorf("%d of the %d LISTs were served from kept encodings", n, len(requests))
	}
	compareGzipped(t, cfg, requests, cached)
	events := encoding.KeptEventsWritten.Load()
	var cachedEvents [][][]byte
	for _, path := range watches {
		cachedEvents = append(cachedEvents, initialEvents(t, cfg, path, "application/json", 6))
	}
	if n := encoding.KeptEventsWritten.Load() - events; n != 6*int64(len(watches)) {
		t.Errorf("%d initial events of watches were written from kept encodings, want %d", n, 6*len(watches))
	}
	served = encoding.CustomResourceListsServed.Load()
	get(t, cfg, "/apis/example.com/v1/widgets", "application/json;as=Table;v=v1;g=meta.k8s.io")
	get(t, cfg, "/apis/example.com/v1/widgets", "application/yaml")
	get(t, cfg, "/apis/example.com/v3/widgets", "application/json") // deprecated: a warning
	get(t, cfg, "/apis/example.com/v1/widgets?watch=1&timeoutSeconds=1", "application/json")
	if n := encoding.CustomResourceListsServed.Load() - served; n != 0 {
		t.Errorf("%d tables, YAML lists, lists of a deprecated version or watches were served by CustomResourceLists", n)
	}

	stop()

	cfg, stop = startServer(t, dir, false)
	for i, r := range requests {
		if got := get(t, cfg, r, "application/json"); got != cached[i] {
			t.Errorf("GET %s: kept encodings gave\n%s\napiextensions-apiserver over etcd gives\n%s", r, cached[i], got)
		}
	}
	compareGzipped(t, cfg, requests, cached)
	for i, path := range watches {
		for j, event := range initialEvents(t, cfg, path, "application/json", 6) {
			if !bytes.Equal(event, cachedEvents[i][j]) {
				t.Errorf("watch %s, event %d: kept encodings gave\n%s\napiextensions-apiserver over etcd gives\n%s", path, j, cachedEvents[i][j], event)
			}
		}
	}
	stop()

	cfg, _ = startServer(t, dir, true)
	widgets = dynamic.NewForConfigOrDie(cfg).Resource(gvr)
	crds = apiextensionsclient.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	// A default added to the schema: the objects read from the storage
	// made for the new schema carry it.
	current, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range current.Spec.Versions {
		v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}}
	}
	if _, err := crds.Update(ctx, current, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := widgets.Namespace("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		color, _, _ := unstructured.NestedString(list.Items[0].Object, "spec", "color")
		return color == "blue", nil
	}); err != nil {
		t.Fatal("the new default never showed:", err)
	}
	served = encoding.CustomResourceListsServed.Load()
	if list, err := widgets.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	} else if color, _, _ := unstructured.NestedString(list.Items[len(list.Items)-1].Object, "spec", "color"); color != "blue" {
		t.Errorf("after the schema change the list has color %q, want the new default", color)
	}
	if encoding.CustomResourceListsServed.Load() == served {
		t.Error("after the schema change, LISTs are no longer served from kept encodings")
	}
}

// compareGzipped GETs each of requests again, accepting gzip: each body,
// decompressed, must be want's, and the lists over 128 KiB (the namespace's
// and the cluster-wide ones) must have come gzipped.
func compareGzipped(t *testing.T, cfg *rest.Config, requests, want []string) {
	t.Helper()
	for i, r := range requests {
		got, gzipped := getAccepting(t, cfg, r, "application/json", "gzip")
		if got != want[i] {
			t.Errorf("GET %s accepting gzip: got\n%.2000s\nwant\n%.2000s", r, got, want[i])
		}
		if large := len(want[i]) > 128<<10; gzipped != large {
			t.Errorf("GET %s accepting gzip: gzipped %v, for a body of %d bytes", r, gzipped, len(want[i]))
		}
	}
}

func cloneValues(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// get GETs path accepting accept and returns the status and body.
func get(t *testing.T, cfg *rest.Config, path, accept string) string {
	t.Helper()
	got, _ := getAccepting(t, cfg, path, accept, "")
	return got
}

// getAccepting is get with Accept-Encoding encoding ("": none); it also
// reports whether the server gzipped the body, which it returns
// decompressed.
func getAccepting(t *testing.T, cfg *rest.Config, path, accept, encoding string) (string, bool) {
	t.Helper()
	var header []string
	if encoding != "" {
		header = []string{"Accept-Encoding", encoding}
	}
	resp := getRaw(t, cfg, path, accept, header...)
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	gzipped := resp.Header.Get("Content-Encoding") == "gzip"
	if gzipped {
		gz, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %s\n%s", resp.Status, resp.Header.Get("Warning"), body), gzipped
}

// widgetsCRD serves example.com's widgets in v1 (stored), v2 and v3
// (deprecated), spec.size a selectable field.
func widgetsCRD() *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"text": {Type: "string"}, "size": {Type: "integer"}}},
	}}}
	version := func(name string, storage, deprecated bool) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage, Deprecated: deprecated, Schema: schema.DeepCopy(),
			SelectableFields: []apiextensionsv1.SelectableField{{JSONPath: ".spec.size"}}}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				version("v1", true, false), version("v2", false, false), version("v3", false, true),
			},
		},
	}
}
