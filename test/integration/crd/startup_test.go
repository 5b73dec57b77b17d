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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

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
// (and in v2 kube-aggregator's apiregistration.k8s.io) merged in, and the
// CRD's soon after (as kube-apiserver's controllers add
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
		!strings.Contains(v2, `"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"`) ||
		!strings.Contains(v2, `"io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"`) ||
		!strings.Contains(v2, `"/apis/apiregistration.k8s.io/v1/apiservices/{name}/status"`) {
		t.Errorf("/openapi/v2 lacks Deployment, CustomResourceDefinition, APIService or its paths (%d bytes)", len(v2))
	} else if regexpMatch(`"io\.k8s\.[^"]*_v2"|"__internal"|"default": ?""`, v2) {
		t.Errorf("/openapi/v2 has conflicting definitions renamed by the merge (_v2), defaults, or internal versions, as kube-apiserver's has not")
	}
	if v3 := get("/openapi/v3/api/v1"); strings.Contains(v3, `"__internal"`) {
		t.Errorf("/openapi/v3/api/v1 names internal versions, as kube-apiserver's does not")
	}
	for _, gv := range []string{"api/v1", "apis/apps/v1", "apis/apiextensions.k8s.io/v1", "apis/apiregistration.k8s.io/v1"} {
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
