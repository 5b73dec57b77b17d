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

package garbagecollector

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
)

var allVerbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}

// fakeDiscovery serves configmaps and clusterroles, plus resources the
// collector must not watch.
func fakeDiscovery() *fakediscovery.FakeDiscovery {
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: allVerbs},
			{Name: "events", Namespaced: true, Kind: "Event", Verbs: allVerbs},
			{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: allVerbs},
			{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
		},
	}, {
		GroupVersion: "rbac.authorization.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "clusterroles", Kind: "ClusterRole", Verbs: allVerbs}},
	}, {
		GroupVersion: "events.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "events", Namespaced: true, Kind: "Event", Verbs: allVerbs}},
	}}}}
}

func TestDeletableResources(t *testing.T) {
	// As New does (the fake has no preferred resources of its own).
	got, err := deletableResources(t.Context(), memory.NewMemCacheClientWithContext(fakeDiscovery()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[schema.GroupVersionResource]string{configMaps: "ConfigMap", clusterRoles: "ClusterRole"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deletable resources (-want +got):\n%s", diff)
	}
}

// stored is obj as the fake metadata client stores a ConfigMap.
func stored(obj *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	obj.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	return obj
}

// runCollector runs a collector on a fake metadata client holding objects
// until the test ends; it returns the client and a func that stops the
// collector and returns once Run has.
func runCollector(t *testing.T, objects ...apiruntime.Object) (*metadatafake.FakeMetadataClient, func()) {
	t.Helper()
	scheme := apiruntime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := metadatafake.NewSimpleMetadataClient(scheme, objects...)
	gc, err := New(Config{Metadata: client, Discovery: fakeDiscovery(), ResyncPeriod: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		gc.Run(ctx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return client, stop
}

// TestCollectorDecidesWithLiveOwners checks the decisions against a fake
// API: a dependent whose owners are all gone is deleted; one with an owner
// left loses its references to the others.
func TestCollectorDecidesWithLiveOwners(t *testing.T) {
	client, _ := runCollector(t,
		stored(object("owner")),
		stored(object("orphan", ownedBy("gone", true))),
		stored(object("kept", ownedBy("gone", true), ownedBy("owner", false))),
		stored(object("replaced", metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "old-owner"})),
	)
	configMaps := client.Resource(configMaps).Namespace("ns")
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, orphanErr := configMaps.Get(ctx, "orphan", metav1.GetOptions{})
		_, replacedErr := configMaps.Get(ctx, "replaced", metav1.GetOptions{})
		kept, err := configMaps.Get(ctx, "kept", metav1.GetOptions{})
		return apierrors.IsNotFound(orphanErr) && apierrors.IsNotFound(replacedErr) && err == nil && len(kept.OwnerReferences) == 1, nil
	})
	if err != nil {
		t.Fatalf("waiting for orphan and replaced deleted, kept patched: %v", err)
	}
	kept, err := configMaps.Get(t.Context(), "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := kept.OwnerReferences[0].UID; got != "owner" {
		t.Errorf("kept's owner: got %s, want owner", got)
	}
	if _, err := configMaps.Get(t.Context(), "owner", metav1.GetOptions{}); err != nil {
		t.Errorf("owner: got %v, want it kept", err)
	}
}

// TestRunStopsPromptly checks that Run returns within a second of its
// context ending and leaves no goroutine behind.
func TestRunStopsPromptly(t *testing.T) {
	before := runtime.NumGoroutine()
	client, stop := runCollector(t, stored(object("owner")), stored(object("dep", ownedBy("gone", false))))
	// Wait until it works: the dependent of the absent owner goes.
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.Resource(configMaps).Namespace("ns").Get(ctx, "dep", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stop()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Run returned %v after its context ended, want within 1s", took)
	}
	// Goroutines that Run ended may take a moment to exit.
	var now int
	err = wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		now = runtime.NumGoroutine()
		return now <= before, nil
	})
	if err != nil {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: got %d after Run returned, want at most %d as before:\n%s", now, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestNewValidates(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config Config
	}{
		{"no metadata client", Config{Discovery: fakeDiscovery()}},
		{"no discovery client", Config{Metadata: metadatafake.NewSimpleMetadataClient(apiruntime.NewScheme())}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.config); err == nil {
				t.Errorf("got no error")
			}
		})
	}
}
