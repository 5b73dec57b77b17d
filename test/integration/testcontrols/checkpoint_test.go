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
	"fmt"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsv1client "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestRestoreCRDs: a CRD deleted since the checkpoint is served again with
// its custom resources; one made since is gone, and so is its API.
func TestRestoreCRDs(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	crds := apiextensionsclient.NewForConfigOrDie(s.Config).ApiextensionsV1().CustomResourceDefinitions()
	dyn := dynamic.NewForConfigOrDie(s.Config)
	kept, made := crdFor("kept.example.com"), crdFor("made.example.com")
	keptGVR := schema.GroupVersionResource{Group: kept.Spec.Group, Version: "v1", Resource: "widgets"}
	madeGVR := schema.GroupVersionResource{Group: made.Spec.Group, Version: "v1", Resource: "widgets"}
	createCRD(t, crds, kept)
	createWidget(t, dyn, keptGVR, "w1")
	if _, err := s.Checkpoint(ctx, "with-kept"); err != nil {
		t.Fatal(err)
	}

	createCRD(t, crds, made)
	createWidget(t, dyn, madeGVR, "w2")
	if err := crds.Delete(ctx, kept.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := crds.Get(ctx, kept.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, "the CRD and its custom resources to be deleted")

	if _, err := s.Restore(ctx, "with-kept"); err != nil {
		t.Fatal(err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := dyn.Resource(keptGVR).Namespace("default").Get(ctx, "w1", metav1.GetOptions{})
		return err == nil
	}, "the custom resource of the CRD put back to be served")
	if _, err := crds.Get(ctx, made.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("CRD made after the checkpoint: GET answered %v, want NotFound", err)
	}
	framework.WaitUntil(t, func() bool {
		_, err := client.Discovery().ServerResourcesForGroupVersion(made.Spec.Group + "/v1")
		return apierrors.IsNotFound(err)
	}, "discovery to drop the group of the CRD made after the checkpoint")
	if _, err := dyn.Resource(madeGVR).Namespace("default").Get(ctx, "w2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("custom resource of the CRD made after the checkpoint: GET answered %v, want NotFound", err)
	}
}

// TestCheckpointHoldsCompaction: while a checkpoint is held, the server's
// compactor stops at its revision, so it can always be restored; deleting
// it lets compaction go past.
func TestCheckpointHoldsCompaction(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t, func(o *server.Options) { o.EtcdCompactionInterval = 20 * time.Millisecond })
	ctx := t.Context()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: s.EtcdServers, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	// compacted is the revision the compactors last compacted to, and how
	// many compactions there were (the key's version).
	compacted := func() (rev, rounds int64) {
		resp, err := etcd.Get(ctx, "compact_rev_key")
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0, 0
		}
		rev, _ = strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
		return rev, resp.Kvs[0].Version
	}
	ns := framework.CreateNamespace(t, client)
	checkpoint, err := s.Checkpoint(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	framework.CreateCMIn(t, client, ns, "after", nil)
	_, start := compacted()
	for i := 0; ; i++ {
		framework.UpdateCMLabels(t, client, ns, "after", map[string]string{"round": fmt.Sprint(i)})
		rev, rounds := compacted()
		if rev > checkpoint {
			t.Fatalf("etcd compacted to %d, past the checkpoint held at %d", rev, checkpoint)
		}
		if rounds >= start+5 {
			break
		}
		framework.Poll(t, "the compactor's next round", 10*time.Second, func() bool { _, r := compacted(); return r > rounds })
	}
	if _, err := s.Restore(ctx, "held"); err != nil {
		t.Fatalf("restore of a checkpoint held through compactions: %v", err)
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap made after the checkpoint: GET answered %v, want NotFound", err)
	}

	if err := s.DeleteCheckpoint("held"); err != nil {
		t.Fatal(err)
	}
	framework.CreateCMIn(t, client, ns, "churn", nil)
	round := 0
	framework.Poll(t, "compaction past the released checkpoint", 10*time.Second, func() bool {
		round++
		framework.UpdateCMLabels(t, client, ns, "churn", map[string]string{"round": fmt.Sprint(round)})
		rev, _ := compacted()
		return rev > checkpoint
	})
}

// TestCheckpointBadInput: each wrong use is a clear 4xx and changes nothing.
func TestCheckpointBadInput(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	if _, err := s.Checkpoint(ctx, "Not_A_Name"); !apierrors.IsInvalid(err) {
		t.Errorf("checkpoint named Not_A_Name: %v, want Invalid", err)
	}
	if _, err := s.Restore(ctx, "unknown"); !apierrors.IsNotFound(err) {
		t.Errorf("restore of an unknown checkpoint: %v, want NotFound", err)
	}
	if _, err := s.Checkpoint(ctx, "twice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checkpoint(ctx, "twice"); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second checkpoint of one name: %v, want AlreadyExists", err)
	}
	ns := framework.CreateNamespace(t, client)
	if err := s.DeleteCheckpoint("twice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, "twice"); !apierrors.IsNotFound(err) {
		t.Errorf("restore of a deleted checkpoint: %v, want NotFound", err)
	}
	if err := s.DeleteCheckpoint("twice"); !apierrors.IsNotFound(err) {
		t.Errorf("second delete of a checkpoint: %v, want NotFound", err)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace made after the deleted checkpoint: %v, want it kept", err)
	}
}

func crdFor(group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

func createCRD(t *testing.T, crds apiextensionsv1client.CustomResourceDefinitionInterface, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if _, err := crds.Create(t.Context(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createWidget creates a custom resource as soon as its CRD is served.
func createWidget(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string) {
	t.Helper()
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "Widget", "metadata": map[string]any{"name": name}}}
	framework.WaitUntil(t, func() bool {
		_, err := dyn.Resource(gvr).Namespace("default").Create(t.Context(), w, metav1.CreateOptions{})
		return err == nil
	}, "a custom resource to be created")
}
