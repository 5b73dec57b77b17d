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

package resources

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestResponseForms checks that GET, LIST and WATCH answer in every form
// kubectl and informers ask for: JSON, protobuf, Table and PartialObjectMetadata.
func TestResponseForms(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		s, client := framework.Start(t, path)
		framework.CreateConfigMaps(t, client, "default", 2)

		t.Run("protobuf", func(t *testing.T) {
			cfg := rest.CopyConfig(s.Config)
			cfg.ContentType = "application/vnd.kubernetes.protobuf"
			cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
			pb := kubernetes.NewForConfigOrDie(cfg)
			cm, err := pb.CoreV1().ConfigMaps("default").Get(t.Context(), "cm-000", metav1.GetOptions{})
			if err != nil || cm.Data["i"] != "0" {
				t.Fatalf("GET: got %v, %v", cm, err)
			}
			list, err := pb.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
			if err != nil || len(list.Items) != 2 {
				t.Fatalf("LIST: got %v, %v", list, err)
			}
			w, err := pb.CoreV1().ConfigMaps("default").Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			framework.CreateCMNamed(t, client, "pb-watched")
			ev := framework.NextEvent(t, w)
			if got, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || got.Name != "pb-watched" {
				t.Errorf("WATCH: got %v %T, want ADDED pb-watched", ev.Type, ev.Object)
			}
		})

		t.Run("PartialObjectMetadata", func(t *testing.T) {
			meta := metadata.NewForConfigOrDie(s.Config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
			obj, err := meta.Get(t.Context(), "cm-000", metav1.GetOptions{})
			if err != nil || obj.Name != "cm-000" || obj.UID == "" {
				t.Fatalf("GET: got %+v, %v", obj, err)
			}
			list, err := meta.List(t.Context(), metav1.ListOptions{})
			if err != nil || len(list.Items) < 2 {
				t.Fatalf("LIST: got %+v, %v", list, err)
			}
			w, err := meta.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			framework.CreateCMNamed(t, client, "meta-watched")
			ev := framework.NextEvent(t, w)
			if got, ok := ev.Object.(*metav1.PartialObjectMetadata); ev.Type != watch.Added || !ok || got.Name != "meta-watched" {
				t.Errorf("WATCH: got %v %#v, want ADDED meta-watched as PartialObjectMetadata", ev.Type, ev.Object)
			}
		})

		t.Run("Table", func(t *testing.T) {
			httpClient, err := rest.HTTPClientFor(s.Config)
			if err != nil {
				t.Fatal(err)
			}
			get := func(path string) *http.Response {
				t.Helper()
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.Config.Host+path, nil)
				req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
				resp, err := httpClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK {
					body, _ := io.ReadAll(resp.Body)
					t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
				}
				return resp
			}
			for _, path := range []string{"/api/v1/namespaces/default/configmaps/cm-000", "/api/v1/namespaces/default/configmaps"} {
				resp := get(path)
				var table metav1.Table
				err := json.NewDecoder(resp.Body).Decode(&table)
				resp.Body.Close()
				if err != nil || table.Kind != "Table" || len(table.ColumnDefinitions) != 3 || len(table.Rows) == 0 || table.Rows[0].Cells[0] != "cm-000" {
					t.Errorf("GET %s as Table: got %+v, %v", path, table, err)
				}
			}
			resp := get("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0")
			defer resp.Body.Close()
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var ev struct {
				Type   string
				Object metav1.Table
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Kind != "Table" || len(ev.Object.Rows) != 1 {
				t.Errorf("WATCH as Table: got %s (%v)", strings.TrimSpace(line), err)
			}
		})
	})
}

// TestEveryResourceAnswersInEveryForm asks every resource for GET, LIST and
// WATCH as protobuf, Table and PartialObjectMetadata, over plain HTTP.
func TestEveryResourceAnswersInEveryForm(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		s, _ := framework.Start(t, path)
		dyn := dynamic.NewForConfigOrDie(s.Config)
		httpClient, err := rest.HTTPClientFor(s.Config)
		if err != nil {
			t.Fatal(err)
		}
		forms := map[string]string{
			"protobuf":              "application/vnd.kubernetes.protobuf",
			"Table":                 "application/json;as=Table;v=v1;g=meta.k8s.io",
			"PartialObjectMetadata": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
		}
		listForms := map[string]string{
			"protobuf":              forms["protobuf"],
			"Table":                 forms["Table"],
			"PartialObjectMetadata": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
		}
		for i, r := range framework.ServedResources {
			name := fmt.Sprintf("x%d", i) // core and events.k8s.io Events are one collection
			obj := framework.NewObject(r.GVR.GroupVersion().String(), r.Kind, name, r.Body)
			if _, err := r.Client(dyn).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			collection := r.CollectionPath()
			for form, accept := range forms {
				listKind := form
				if form == "PartialObjectMetadata" {
					listKind = "PartialObjectMetadataList"
				}
				for _, req := range []struct{ verb, path, accept, kind string }{
					{"GET", collection + "/" + name, accept, form},
					{"LIST", collection, listForms[form], listKind},
					{"WATCH", collection + "?watch=true&resourceVersion=0", accept, form},
				} {
					body := framework.Fetch(t, httpClient, s.Config.Host+req.path, req.accept)
					var ok bool
					switch {
					case form != "protobuf":
						ok = strings.Contains(body, `"kind":"`+req.kind+`"`)
					case req.verb == "WATCH": // length-prefixed WatchEvent frames
						ok = strings.Contains(body, "ADDED") && strings.Contains(body, r.Kind)
					default: // the protobuf envelope: magic "k8s\x00", then the typed object
						ok = strings.HasPrefix(body, "k8s\x00") && strings.Contains(body, r.Kind)
					}
					if !ok {
						t.Errorf("%s %s as %s: got %q", req.verb, r.GVR.Resource, form, body[:min(len(body), 200)])
					}
				}
			}
		}
	})
}

// TestConcurrentEncodingsOfPodsWithQuantities reads pods that carry
// resource quantities (emptyDir.sizeLimit, container limits) in every form
// at once, LIST and WATCH from the cache: encoding a cached object must
// not write into it (the race detector watches, under make test).
func TestConcurrentEncodingsOfPodsWithQuantities(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	httpClient, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	size := resource.MustParse("512Mi")
	for i := range 5 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q-%d", i)},
			Spec: corev1.PodSpec{
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &size}}}},
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
				}}},
			},
		}
		if _, err := client.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// resourceVersion=0 reads whatever the cache holds: wait until it holds
	// the last pod, or the reads below could race its create.
	framework.WaitUntil(t, func() bool {
		pods, err := client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{ResourceVersion: "0"})
		return err == nil && slices.ContainsFunc(pods.Items, func(p corev1.Pod) bool { return p.Name == "q-4" })
	}, "the cache to hold pod q-4")
	collection := s.Config.Host + "/api/v1/namespaces/default/pods"
	var wg sync.WaitGroup
	for _, accept := range []string{
		"application/json",
		"application/vnd.kubernetes.protobuf",
		"application/json;as=Table;v=v1;g=meta.k8s.io",
	} {
		for _, query := range []string{"?resourceVersion=0", "", "?watch=true&resourceVersion=0&timeoutSeconds=1"} {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, collection+query, nil)
				req.Header.Set("Accept", accept)
				resp, err := httpClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "q-4") {
					t.Errorf("GET pods%s as %s: got %d %q, %v; want 200 with pod q-4", query, accept, resp.StatusCode, body[:min(len(body), 200)], err)
				}
			})
		}
	}
	wg.Wait()
}
