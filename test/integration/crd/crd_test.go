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

package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/miniapiserver/miniapiserver/pkg/features"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// crdBases is a kubebuilder project's CRD directory, as controller-gen
// writes it: one CRD, CronTab, with a CEL rule, defaults, the status and
// scale subresources, printer columns and two versions (v1 stored, v1beta1
// served, None conversion).
const crdBases = "../testdata/kubebuilder/config/crd/bases"

var cronTabs = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

func cronTab(name string, replicas, minReplicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1",
		"kind":       "CronTab",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"image": "busybox", "replicas": replicas, "minReplicas": minReplicas},
	}}
}

// TestCRDWithKubectl goes through a CRD's life with the real kubectl, as a
// user would: apply it, wait for Established, then everything
// apiextensions-apiserver does for its custom resources.
func TestCRDWithKubectl(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	framework.Kubectl(t, s, "", "apply", "-f", crdBases)
	framework.Kubectl(t, s, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/crontabs.stable.example.com")
	crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs).Namespace("default")

	// Create: defaults applied, unknown fields pruned.
	framework.Kubectl(t, s, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: nightly}\nspec: {image: busybox, replicas: 2, minReplicas: 1}\n", "apply", "-f", "-")
	pruned := cronTab("pruned", 1, 0)
	pruned.Object["spec"].(map[string]any)["unknown"] = "dropped"
	created, err := crs.Create(ctx, pruned, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(created.Object, "spec", "unknown"); found {
		t.Errorf("unknown field kept: %v", created.Object["spec"])
	}
	if got, _, _ := unstructured.NestedString(created.Object, "spec", "cronSpec"); got != "* * * * *" {
		t.Errorf("spec.cronSpec = %q, want the schema's default", got)
	}

	// CEL: 422 Invalid with the rule's message, from kubectl and client-go.
	_, errOut, err := framework.RunKubectl(t, s, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: bad}\nspec: {image: busybox, replicas: 1, minReplicas: 3}\n", "apply", "-f", "-")
	if err == nil || !strings.Contains(errOut, `The CronTab "bad" is invalid`) || !strings.Contains(errOut, "replicas must be at least minReplicas") {
		t.Errorf("kubectl apply of a CR breaking the CEL rule: err %v, stderr %q; want the rule's message", err, errOut)
	}
	_, err = crs.Create(ctx, cronTab("bad", 1, 3), metav1.CreateOptions{})
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != http.StatusUnprocessableEntity || status.Status().Reason != metav1.StatusReasonInvalid ||
		!strings.Contains(status.Status().Message, "replicas must be at least minReplicas") {
		t.Errorf("create breaking the CEL rule: got %v, want 422 Invalid with the rule's message", err)
	}

	// Printer columns, short name.
	if out := framework.Kubectl(t, s, "", "get", "ct"); !regexpMatch(`(?m)^NAME\s+SCHEDULE\s+REPLICAS$`, out) || !regexpMatch(`(?m)^nightly\s+\* \* \* \* \*\s+2\s+`, out) {
		t.Errorf("kubectl get ct:\n%s\nwant the printer columns", out)
	}

	// /status changes status only; an update of the object leaves status alone.
	obj, err := crs.Get(ctx, "nightly", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(obj.Object, int64(2), "status", "replicas")
	_ = unstructured.SetNestedField(obj.Object, "changed", "spec", "image")
	obj, err = crs.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if image, _, _ := unstructured.NestedString(obj.Object, "spec", "image"); image != "busybox" {
		t.Errorf("a /status update changed spec.image to %q", image)
	}
	_ = unstructured.SetNestedField(obj.Object, int64(7), "status", "replicas")
	obj, err = crs.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if replicas, _, _ := unstructured.NestedInt64(obj.Object, "status", "replicas"); replicas != 2 {
		t.Errorf("an update changed status.replicas to %d", replicas)
	}

	// /scale.
	framework.Kubectl(t, s, "", "scale", "ct", "nightly", "--replicas=4")
	scale := framework.Kubectl(t, s, "", "get", "--raw", "/apis/stable.example.com/v1/namespaces/default/crontabs/nightly/scale")
	if !strings.Contains(scale, `"kind":"Scale"`) || !strings.Contains(scale, `"spec":{"replicas":4}`) || !strings.Contains(scale, `"replicas":2`) {
		t.Errorf("scale: %s; want spec.replicas 4 and status.replicas 2", scale)
	}

	// Server-side apply: kubectl owns the fields it applied.
	framework.Kubectl(t, s, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: applied}\nspec: {image: busybox, replicas: 3}\n", "apply", "--server-side", "-f", "-")
	applied, err := crs.Get(ctx, "applied", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := applied.GetManagedFields(); len(m) != 1 || m[0].Manager != "kubectl" || m[0].Operation != metav1.ManagedFieldsOperationApply ||
		!strings.Contains(string(m[0].FieldsV1.Raw), `"f:replicas"`) {
		t.Errorf("managed fields after a server-side apply: %+v", m)
	}
	_, errOut, err = framework.RunKubectl(t, s, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: applied}\nspec: {image: busybox, replicas: 5}\n", "apply", "--server-side", "--field-manager=other", "-f", "-")
	if err == nil || !strings.Contains(errOut, "conflict") {
		t.Errorf("a second manager applying the same field: err %v, stderr %q; want a conflict", err, errOut)
	}

	// Both versions serve the same objects (None conversion).
	if v := framework.Kubectl(t, s, "", "get", "crontabs.v1beta1.stable.example.com", "nightly", "-o", "jsonpath={.apiVersion} {.spec.replicas}"); v != "stable.example.com/v1beta1 4" {
		t.Errorf("nightly through v1beta1: %q", v)
	}

	// Discovery (aggregated, as kubectl asks, and legacy) and OpenAPI v2 and v3.
	if out := framework.Kubectl(t, s, "", "api-resources", "--api-group=stable.example.com"); !regexpMatch(`(?m)^crontabs\s+ct\s+stable.example.com/v1\s+true\s+CronTab$`, out) {
		t.Errorf("kubectl api-resources:\n%s", out)
	}
	var groups metav1.APIGroupList
	if err := json.Unmarshal([]byte(framework.Kubectl(t, s, "", "get", "--raw", "/apis")), &groups); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "stable.example.com" }); i < 0 ||
		groups.Groups[i].PreferredVersion.Version != "v1" || len(groups.Groups[i].Versions) != 2 {
		t.Errorf("legacy /apis: %+v; want stable.example.com, v1 preferred, two versions", groups.Groups)
	}
	if !slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "apiextensions.k8s.io" }) {
		t.Errorf("legacy /apis lacks apiextensions.k8s.io")
	}
	if out := framework.Kubectl(t, s, "", "explain", "crontab.spec.replicas"); !strings.Contains(out, "Replicas is how many copies to run.") {
		t.Errorf("kubectl explain crontab.spec.replicas:\n%s", out)
	}
	// OpenAPI v2 is built on its first request; then apiextensions' OpenAPI
	// controller adds the CRDs to it. Its protobuf form, which kubectl
	// reads, is converted from the JSON once per spec, on the first request
	// for it: under the race detector on a loaded machine, that takes
	// longer than the server's request timeout and kubectl's. The
	// conversion goes on after a request times out and is kept, so it is
	// asked for here until it holds the CronTab; both explains then read it.
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		spec, err := client.Discovery().RESTClient().Get().AbsPath("/openapi/v2").
			SetHeader("Accept", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf").DoRaw(ctx)
		return err == nil && bytes.Contains(spec, []byte("com.example.stable.v1.CronTab")), nil
	}); err != nil {
		t.Fatalf("waiting for the CronTab in OpenAPI v2 (protobuf): %v", err)
	}
	if out := framework.Kubectl(t, s, "", "explain", "crd.spec.versions.schema", "--output=plaintext-openapiv2", "--request-timeout=55s"); !strings.Contains(out, "openAPIV3Schema") {
		t.Errorf("kubectl explain (OpenAPI v2) of the CRD type:\n%s", out)
	}
	if out := framework.Kubectl(t, s, "", "explain", "crontab.spec.image", "--output=plaintext-openapiv2", "--request-timeout=55s"); !strings.Contains(out, "Image is the container image to run.") {
		t.Errorf("kubectl explain (OpenAPI v2) crontab.spec.image:\n%s", out)
	}
}

// TestCustomResourcesListAndWatch pages through custom resources and
// watch-lists them on both storage paths: from the watch cache (its
// snapshots) with it, from etcd without.
func TestCustomResourcesListAndWatch(t *testing.T) {
	// Serial: its LISTs of crontabs, which other tests here create, are
	// checked against the process's counters (RoutesOf).
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s := testserver.Start(t, path, testserver.WithCRDs(crdBases))
		ctx := t.Context()
		crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs).Namespace("default")
		var want []string
		for i := range 25 {
			name := fmt.Sprintf("ct-%02d", i)
			if _, err := crs.Create(ctx, cronTab(name, 1, 0), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			want = append(want, name)
		}

		var got []string
		var pages int
		routes := framework.RoutesOf(t, s, "stable.example.com/crontabs", func() {
			opts := metav1.ListOptions{Limit: 10}
			for {
				list, err := crs.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, item := range list.Items {
					got = append(got, item.GetName())
				}
				if opts.Continue = list.GetContinue(); opts.Continue == "" {
					break
				}
			}
		})
		if pages != 3 || !slices.Equal(got, want) {
			t.Errorf("paged with limit 10: %d pages, %v; want 3 pages, %v", pages, got, want)
		}
		if framework.WatchCacheOn(path) {
			// The first page is a consistent read from the cache, the
			// others come from the snapshot it kept (KEP-4988).
			if want := map[string]float64{"cache/consistent": 1, "snapshot/continue": 2}; !maps.Equal(routes, want) {
				t.Errorf("with the watch cache, the 3 pages went %v; want %v", routes, want)
			}
		} else if len(routes) != 0 {
			t.Errorf("without the watch cache, the pages reached a cache: %v", routes)
		}

		w, err := crs.Watch(ctx, framework.WatchListOptions(""))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		var initial []string
		for {
			ev := framework.NextEvent(t, w)
			if ev.Type == watch.Bookmark {
				if ev.Object.(*unstructured.Unstructured).GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				break
			}
			if ev.Type != watch.Added {
				t.Fatalf("initial event %s", framework.Describe(ev))
			}
			initial = append(initial, ev.Object.(*unstructured.Unstructured).GetName())
		}
		slices.Sort(initial)
		if !slices.Equal(initial, want) {
			t.Errorf("watch-list's initial events: %v, want %v", initial, want)
		}
		if _, err := crs.Create(ctx, cronTab("after", 1, 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		framework.ExpectEvents(t, w, "ADDED after")
	})
}

// TestCustomResourcesFollowTheGates: the storage gates switch custom
// resources as they switch built-in types, since both go through one
// storage decorator.
func TestCustomResourcesFollowTheGates(t *testing.T) {
	// Serial: it sets feature gates, which are the process's.
	page := func(t *testing.T, s *testserver.Server) (pages int, routes map[string]float64) {
		t.Helper()
		crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs).Namespace("default")
		for i := range 5 {
			if _, err := crs.Create(t.Context(), cronTab(fmt.Sprint("ct-", i), 1, 0), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		routes = framework.RoutesOf(t, s, "stable.example.com/crontabs", func() {
			opts := metav1.ListOptions{Limit: 2}
			for {
				list, err := crs.List(t.Context(), opts)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if opts.Continue = list.GetContinue(); opts.Continue == "" {
					return
				}
			}
		})
		return pages, routes
	}
	t.Run("PaginationFromCache off", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.PaginationFromCache, false)
		pages, routes := page(t, testserver.Start(t, testserver.WithCRDs(crdBases)))
		if want := map[string]float64{"cache/consistent": 1, "etcd/snapshots_disabled": 2}; pages != 3 || !maps.Equal(routes, want) {
			t.Errorf("%d pages, routes %v; want 3 pages, routes %v", pages, routes, want)
		}
	})
	t.Run("APIListChunking off", func(t *testing.T) {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.APIListChunking, false)
		if pages, _ := page(t, testserver.Start(t, testserver.WithCRDs(crdBases))); pages != 1 {
			t.Errorf("limit 2 over 5 CronTabs gave %d pages; want 1 (limit ignored)", pages)
		}
	})
}
