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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
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
	s, _ := framework.Start(t)
	ctx := t.Context()
	framework.Kubectl(t, s, "", "apply", "-f", crdBases)
	framework.Kubectl(t, s, "", "wait", "--for=condition=Established", "--timeout=10s", "crd/crontabs.stable.example.com")
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
	// The first /openapi/v2 in protobuf builds the whole spec: seconds under
	// the race detector on a loaded machine, over kubectl's 32s for
	// discovery requests.
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

// TestDeletingCRDDeletesCustomResources deletes a CRD with custom resources
// in two namespaces: they go from etcd, and the CRD with them.
func TestDeletingCRDDeletesCustomResources(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, testserver.WithCRDs(crdBases))
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(s.Config)
	for _, ns := range []string{"default", "kube-public"} {
		for i := range 3 {
			if _, err := dyn.Resource(cronTabs).Namespace(ns).Create(ctx, cronTab(fmt.Sprint("ct-", i), 1, 0), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: s.EtcdServers, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	stored := func() int64 {
		t.Helper()
		resp, err := etcd.Get(ctx, "/registry/stable.example.com/crontabs/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	if n := stored(); n != 6 {
		t.Fatalf("%d CronTabs in etcd under /registry/stable.example.com/crontabs/, want 6", n)
	}

	crds := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(ctx, "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := crds.Get(ctx, "crontabs.stable.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, "the CRD to be deleted")
	if n := stored(); n != 0 {
		t.Errorf("%d CronTabs left in etcd after their CRD was deleted", n)
	}
	// Discovery follows the CRD's delete event (apiextensions-apiserver's
	// discovery controller), a moment after the CRD itself has gone.
	framework.WaitUntil(t, func() bool {
		_, err := client.Discovery().ServerResourcesForGroupVersion("stable.example.com/v1")
		return apierrors.IsNotFound(err)
	}, "discovery of stable.example.com/v1 to answer 404 after the CRD went")
}

// TestDeletingNamespaceDeletesCustomResources: the namespace controller
// empties custom resources too, and only then is the namespace gone.
func TestDeletingNamespaceDeletesCustomResources(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, testserver.WithCRDs(crdBases))
	ctx := t.Context()
	crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs)
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace("team"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := crs.Namespace("team").Create(ctx, cronTab("nightly", 1, 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := client.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, "the namespace to be deleted")
	list, err := crs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("CronTabs left after their namespace was deleted: %v", list.Items)
	}
}

// TestWithCRDsOnRestart restarts a server on its data dir with a CRD
// manifest that changed: the CRD is updated, its custom resources kept.
func TestWithCRDsOnRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := testserver.Start(t, func(o *server.Options) { o.DataDir = dir }, testserver.WithCRDs(crdBases))
	crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs).Namespace("default")
	if _, err := crs.Create(t.Context(), cronTab("kept", 1, 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	manifest, err := os.ReadFile(filepath.Join(crdBases, "stable.example.com_crontabs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "crontabs.yaml")
	if err := os.WriteFile(changed, bytes.ReplaceAll(manifest, []byte("CronSpec is the schedule, in cron format."), []byte("When to run.")), 0o600); err != nil {
		t.Fatal(err)
	}
	s = testserver.Start(t, func(o *server.Options) { o.DataDir = dir }, testserver.WithCRDs(changed))
	crs = dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs).Namespace("default")
	if _, err := crs.Get(t.Context(), "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("the CronTab after a restart: %v", err)
	}
	crd, err := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "crontabs.stable.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["cronSpec"].Description; d != "When to run." {
		t.Errorf("cronSpec's description after the restart: %q, want the changed manifest's", d)
	}
}

// TestOpenAPIRightAfterStart asks for the OpenAPI the moment a server with
// a CRD is ready: the server builds it in the background from its start,
// and requests wait for it, so each answers in full, apiextensions.k8s.io
// merged in, and the CRD's soon after (as kube-apiserver's controllers add
// it). Another server in the process, which shares the built-in groups'
// specs, serves them in full too, and not the first one's CRD.
func TestOpenAPIRightAfterStart(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.WithCRDs(crdBases))
	getter := func(s *testserver.Server) func(string) string {
		client := kubernetes.NewForConfigOrDie(s.Config).Discovery().RESTClient()
		return func(path string) string {
			t.Helper()
			body, err := client.Get().AbsPath(path).DoRaw(t.Context())
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			return string(body)
		}
	}
	get := getter(s)
	if v2 := get("/openapi/v2"); !strings.Contains(v2, `"io.k8s.api.apps.v1.Deployment"`) ||
		!strings.Contains(v2, `"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"`) {
		t.Errorf("/openapi/v2 lacks Deployment or CustomResourceDefinition (%d bytes)", len(v2))
	}
	for _, gv := range []string{"api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1"} {
		if !strings.Contains(get("/openapi/v3"), `"`+gv+`"`) {
			t.Errorf("/openapi/v3 does not list %s", gv)
		}
	}
	if v3 := get("/openapi/v3/apis/apps/v1"); !strings.Contains(v3, `"io.k8s.api.apps.v1.Deployment"`) {
		t.Errorf("/openapi/v3/apis/apps/v1 lacks Deployment (%d bytes)", len(v3))
	}
	if v3 := get("/openapi/v3/apis/apiextensions.k8s.io/v1"); !strings.Contains(v3, `"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"`) {
		t.Errorf("/openapi/v3/apis/apiextensions.k8s.io/v1 lacks CustomResourceDefinition (%d bytes)", len(v3))
	}
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return strings.Contains(get("/openapi/v2"), `"com.example.stable.v1.CronTab"`) &&
			strings.Contains(get("/openapi/v3"), `"apis/stable.example.com/v1"`), nil
	})
	if err != nil {
		t.Errorf("the CRD never joined /openapi/v2 and /openapi/v3: %v", err)
	}

	second := testserver.Start(t)
	other := getter(second)
	if index := other("/openapi/v3"); !strings.Contains(index, `"apis/apps/v1"`) || strings.Contains(index, `"apis/stable.example.com/v1"`) {
		t.Errorf("another server's /openapi/v3 lists, want apps/v1 and not the first server's CRD group:\n%s", index)
	}
	if v3 := other("/openapi/v3/apis/apps/v1"); !strings.Contains(v3, `"io.k8s.api.apps.v1.Deployment"`) {
		t.Errorf("another server's /openapi/v3/apis/apps/v1 lacks Deployment (%d bytes)", len(v3))
	}
	if v3 := other("/openapi/v3/apis/apiextensions.k8s.io/v1"); !strings.Contains(v3, `CustomResourceDefinition"`) {
		t.Errorf("another server's /openapi/v3/apis/apiextensions.k8s.io/v1 lacks CustomResourceDefinition (%d bytes)", len(v3))
	}
	// A group version a server does not serve is a 404, as kube-apiserver
	// answers: the other server's CRD group, and one no server has.
	notFound := func(s *testserver.Server, path string) {
		t.Helper()
		err := kubernetes.NewForConfigOrDie(s.Config).Discovery().RESTClient().Get().AbsPath(path).Do(t.Context()).Error()
		if !apierrors.IsNotFound(err) {
			t.Errorf("GET %s: got %v, want a 404", path, err)
		}
	}
	notFound(second, "/openapi/v3/apis/stable.example.com/v1")
	notFound(s, "/openapi/v3/apis/nope.example.com/v1")
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// TestInstalledCRDsAreListedOnce: Start returns once each CRD it installed
// has been listed, which builds the CRD's storage (and watch cache),
// validators and schemas: the first request for a CRD's resources builds
// them, and that would otherwise be the test's first create.
func TestInstalledCRDsAreListedOnce(t *testing.T) {
	t.Parallel()
	manifest, err := os.ReadFile(filepath.Join(crdBases, "stable.example.com_crontabs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // a group of its own: the metrics are the process's
	if err := os.WriteFile(filepath.Join(dir, "crd.yaml"), []byte(strings.ReplaceAll(string(manifest), "stable.example.com", "listed-once.example.com")), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testserver.Start(t, testserver.WithCRDs(dir))
	if n := framework.SumSamples(framework.ScrapeMetrics(t, s), "miniapiserver_watch_cache_list_requests_total", map[string]string{"group": "listed-once.example.com"}); n != 1 {
		t.Errorf("the CRD's resources were listed %v times by the start, want 1", n)
	}
}

// TestFirstCustomResourceCreateDoesNotWait: apiextensions-apiserver holds
// the creates of a CRD's custom resources for 2s after the CRD becomes
// Established, for the other servers of an HA cluster to see it. A server
// on its embedded etcd has none: its first create is served at once, as
// its CRD's Established condition is stored 2s earlier. So is one alone on
// an external etcd; with another server's identity lease there, the
// condition's time is the true one.
func TestFirstCustomResourceCreateDoesNotWait(t *testing.T) {
	// Serial: it measures how long a create takes.
	const haWait = 2 * time.Second // apiextensions-apiserver's
	t.Run("embedded etcd", func(t *testing.T) {
		s := testserver.Start(t, testserver.WithCRDs(crdBases))
		crs := dynamic.NewForConfigOrDie(s.Config).Resource(cronTabs).Namespace("default")
		start := time.Now()
		if _, err := crs.Create(t.Context(), cronTab("first", 1, 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d >= haWait {
			t.Errorf("the first create took %s, want no %s wait", d, haWait)
		}
	})
	for _, tc := range []struct {
		name    string
		servers int
	}{{"external etcd, alone", 1}, {"external etcd, shared", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			external := framework.ExternalEtcd(t, 0)
			for range tc.servers - 1 {
				testserver.Start(t, external)
			}
			s := testserver.Start(t, external, testserver.WithCRDs(crdBases))
			crd, err := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), "crontabs.stable.example.com", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range crd.Status.Conditions {
				if backdated := c.LastTransitionTime.Before(&crd.CreationTimestamp); c.Type == "Established" && backdated != (tc.servers == 1) {
					t.Errorf("Established at %s, the CRD created at %s: backdated %t, want %t", c.LastTransitionTime, crd.CreationTimestamp, backdated, tc.servers == 1)
				}
			}
		})
	}
}
