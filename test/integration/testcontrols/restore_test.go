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

package testcontrols

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/informertest"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestRestoreIsOrdinaryEvents restores a checkpoint under a running
// informer: what was made since is deleted, changed since is reverted,
// deleted since is back, each seen as one event with a newer
// resourceVersion, and the informer ends equal to a fresh LIST without
// listing again.
func TestRestoreIsOrdinaryEvents(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	cms := client.CoreV1().ConfigMaps(ns)
	for _, name := range []string{"changed", "deleted", "kept"} {
		framework.CreateCMIn(t, client, ns, name, map[string]string{"state": "checkpoint"})
	}
	deletedBefore, err := cms.Get(ctx, "deleted", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inf := startInformer(t, client, ns)

	if _, err := s.Checkpoint(ctx, "base"); err != nil {
		t.Fatal(err)
	}
	framework.CreateCMIn(t, client, ns, "made", nil)
	framework.UpdateCMLabels(t, client, ns, "changed", map[string]string{"state": "later"})
	if err := cms.Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	other := framework.CreateNamespace(t, client)
	framework.CreateCMIn(t, client, other, "elsewhere", nil)
	before := framework.ParseRV(t, framework.ResourceVersionNow(t, client))
	framework.WaitUntil(t, func() bool { return inf.seen("made") && !inf.seen("deleted") }, "the informer to see the changes")
	inf.startRecording()

	res, err := s.Restore(ctx, "base")
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted < 3 || res.Recreated < 1 || res.Reverted < 1 {
		t.Errorf("restore counted %+v, want at least 3 deleted (a ConfigMap, a namespace and its ConfigMap), 1 recreated, 1 reverted", res)
	}

	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range list.Items {
		want[cm.Name] = cm.ResourceVersion
		if cm.Labels["state"] != "checkpoint" && cm.Name != "kube-root-ca.crt" {
			t.Errorf("ConfigMap %s has labels %v after the restore, want state=checkpoint", cm.Name, cm.Labels)
		}
	}
	for _, name := range []string{"changed", "deleted", "kept"} {
		if _, ok := want[name]; !ok {
			t.Errorf("ConfigMap %s missing after the restore", name)
		}
	}
	if _, ok := want["made"]; ok {
		t.Error("ConfigMap made after the checkpoint is still there after the restore")
	}
	for _, name := range []string{"changed", "deleted"} {
		if rv := framework.ParseRV(t, want[name]); rv <= before {
			t.Errorf("ConfigMap %s has resourceVersion %d after the restore, want more than %d, the last before it", name, rv, before)
		}
	}
	restored, err := cms.Get(ctx, "deleted", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if restored.UID != deletedBefore.UID {
		t.Errorf("ConfigMap deleted came back with UID %s, want %s (as it was)", restored.UID, deletedBefore.UID)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, other, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s made after the checkpoint: GET answered %v, want NotFound", other, err)
	}

	framework.WaitUntil(t, func() bool { return maps.Equal(inf.state(), want) }, "the informer to equal a fresh LIST")
	wantEvents := map[string]watch.EventType{"made": watch.Deleted, "changed": watch.Modified, "deleted": watch.Added}
	if got := inf.eventsSeen(); !maps.Equal(got, wantEvents) {
		t.Errorf("informer saw %v across the restore, want %v", got, wantEvents)
	}
	if n := inf.lw.Lists(); n != 1 {
		t.Errorf("informer listed %d times, want 1 (no relist across the restore)", n)
	}
}

// informer is a ConfigMap informer on one namespace that counts its
// lists and records the events it gets.
type informer struct {
	ns    string
	store cache.Store
	lw    *informertest.ListWatch
	// mu guards events, nil until startRecording.
	mu     sync.Mutex
	events map[string]watch.EventType
}

func startInformer(t *testing.T, client kubernetes.Interface, ns string) *informer {
	t.Helper()
	inf := &informer{ns: ns, lw: informertest.NewListWatch(client.CoreV1().RESTClient(), "configmaps", ns)}
	store, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: &inf.lw.ListWatch, ObjectType: &corev1.ConfigMap{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { inf.record(obj, watch.Added) },
			UpdateFunc: func(_, obj any) { inf.record(obj, watch.Modified) },
			DeleteFunc: func(obj any) { inf.record(obj, watch.Deleted) },
		},
	})
	inf.store = store
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go ctrl.RunWithContext(ctx)
	framework.Poll(t, "the informer to sync", 30*time.Second, ctrl.HasSynced)
	return inf
}

func (inf *informer) record(obj any, typ watch.EventType) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.events != nil {
		inf.events[obj.(*corev1.ConfigMap).Name] = typ
	}
}

// startRecording records, from now on, the last event of each ConfigMap.
func (inf *informer) startRecording() {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	inf.events = map[string]watch.EventType{}
}

func (inf *informer) eventsSeen() map[string]watch.EventType {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return maps.Clone(inf.events)
}

func (inf *informer) seen(name string) bool {
	_, ok, _ := inf.store.GetByKey(inf.ns + "/" + name)
	return ok
}

func (inf *informer) state() map[string]string {
	out := map[string]string{}
	for _, obj := range inf.store.List() {
		cm := obj.(*corev1.ConfigMap)
		out[cm.Name] = cm.ResourceVersion
	}
	return out
}

// TestRestoreExpiresContinueTokens: a paginated LIST begun before a
// restore cannot continue across it: 410 with a token that continues at
// the latest revision, as after a compaction. One begun after it can.
func TestRestoreExpiresContinueTokens(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		s, client := framework.Start(t, path)
		ctx := t.Context()
		framework.CreateConfigMaps(t, client, "default", 5)
		if _, err := s.Checkpoint(ctx, "five"); err != nil {
			t.Fatal(err)
		}
		framework.CreateCMIn(t, client, "default", "made", nil)
		cms := client.CoreV1().ConfigMaps("default")
		before, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Restore(ctx, "five"); err != nil {
			t.Fatal(err)
		}

		_, err = cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: before.Continue})
		if !apierrors.IsResourceExpired(err) {
			t.Fatalf("continuing a LIST begun before the restore: %v, want 410 Expired", err)
		}
		fresh := err.(apierrors.APIStatus).Status().ListMeta.Continue
		if fresh == "" {
			t.Fatal("the 410 has no continue token")
		}
		rest, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: fresh})
		if err != nil {
			t.Fatalf("continuing with the 410's token: %v", err)
		}
		for _, cm := range rest.Items {
			if cm.Name == "made" {
				t.Error("the rest of the list, at the latest revision, has the ConfigMap the restore deleted")
			}
		}
		after, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: after.Continue}); err != nil {
			t.Errorf("continuing a LIST begun after the restore: %v", err)
		}
	})
}
