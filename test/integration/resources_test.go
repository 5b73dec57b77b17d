package integration

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/miniapiserver/miniapiserver/pkg/server"
)

var podSpec = map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}

// servedResources are every namespaced resource with a minimal valid body.
var servedResources = []struct {
	gvr  schema.GroupVersionResource
	kind string
	body map[string]any
}{
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ConfigMap", map[string]any{"data": map[string]any{"k": "v"}}},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret", map[string]any{"stringData": map[string]any{"k": "v"}}},
	{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", map[string]any{"spec": podSpec}},
	{schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, "PodTemplate", map[string]any{"template": map[string]any{"spec": podSpec}}},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, "ServiceAccount", nil},
	{schema.GroupVersionResource{Version: "v1", Resource: "events"}, "Event", map[string]any{"reason": "Test", "type": "Normal"}},
	{schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "Lease", map[string]any{"spec": map[string]any{"holderIdentity": "me"}}},
}

func newObject(apiVersion, kind, name string, body map[string]any) *unstructured.Unstructured {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}
	for k, v := range body {
		obj[k] = v
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestEveryResourceSupportsCRUD(t *testing.T) {
	forEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		s, _ := start(t, path)
		dyn := dynamic.NewForConfigOrDie(s.Config)
		for _, r := range servedResources {
			t.Run(r.gvr.Resource, func(t *testing.T) {
				ctx := t.Context()
				c := dyn.Resource(r.gvr).Namespace("default")
				apiVersion := r.gvr.GroupVersion().String()
				for _, name := range []string{"a", "b", "c"} {
					if _, err := c.Create(ctx, newObject(apiVersion, r.kind, name, r.body), metav1.CreateOptions{}); err != nil {
						t.Fatalf("create %s: %v", name, err)
					}
				}
				if _, err := c.Create(ctx, newObject(apiVersion, r.kind, "a", r.body), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
					t.Errorf("second create: got %v, want AlreadyExists", err)
				}
				if _, err := c.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"merge"}}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("merge patch: %v", err)
				}
				if _, err := c.Patch(ctx, "b", types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"patched":"json"}}]`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("json patch: %v", err)
				}
				obj, err := c.Get(ctx, "a", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				obj.SetAnnotations(map[string]string{"updated": "yes"})
				if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
					t.Fatalf("update: %v", err)
				}
				obj.SetAnnotations(map[string]string{"updated": "stale"})
				if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
					t.Errorf("update with a stale resourceVersion: got %v, want Conflict", err)
				}
				apply := newObject(apiVersion, r.kind, "d", r.body)
				if _, err := c.Apply(ctx, "d", apply, metav1.ApplyOptions{FieldManager: "test"}); err != nil {
					t.Fatalf("server-side apply: %v", err)
				}
				list, err := c.List(ctx, metav1.ListOptions{LabelSelector: "patched"})
				if err != nil || len(list.Items) != 2 {
					t.Fatalf("list by label: got %v, %v; want a and b", list, err)
				}
				if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
					t.Fatalf("delete: %v", err)
				}
				if _, err := c.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("get after delete: got %v, want NotFound", err)
				}
				if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
					t.Fatalf("deletecollection: %v", err)
				}
				if list, err := c.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
					t.Errorf("list after deletecollection: got %d items, %v; want none", len(list.Items), err)
				}
			})
		}
	})
}
