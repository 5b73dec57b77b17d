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
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

func TestEveryResourceSupportsCRUD(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		// The quota controller's write of the quota fixture's status
		// would make the test's update of it a conflict.
		s, _ := framework.Start(t, path, framework.WithoutControllers("resourcequota"))
		dyn := dynamic.NewForConfigOrDie(s.Config)
		for _, r := range framework.ServedResources {
			t.Run(r.GVR.GroupResource().String(), func(t *testing.T) {
				ctx := t.Context()
				c := r.Client(dyn)
				apiVersion := r.GVR.GroupVersion().String()
				// Claims, volumes and volume attributes classes are created
				// with a protection finalizer: they go once a controller of
				// the server's releases it.
				var finalized bool
				for _, name := range []string{"a", "b", "c"} {
					created, err := c.Create(ctx, framework.NewObject(apiVersion, r.Kind, name, r.Body), metav1.CreateOptions{})
					if err != nil {
						t.Fatalf("create %s: %v", name, err)
					}
					finalized = len(created.GetFinalizers()) > 0
				}
				gone := func(what string, cond func() bool) {
					t.Helper()
					if finalized {
						framework.WaitUntil(t, cond, what)
					} else if !cond() {
						t.Errorf("%s: not at once", what)
					}
				}
				if _, err := c.Create(ctx, framework.NewObject(apiVersion, r.Kind, "a", r.Body), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
					t.Errorf("second create: got %v, want AlreadyExists", err)
				}
				if _, err := c.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"merge"}}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("merge patch: %v", err)
				}
				if _, err := c.Patch(ctx, "b", types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"patched":"json"}}]`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("json patch: %v", err)
				}
				// The server's controllers may write the object too (APF's
				// writes a FlowSchema's status): on a conflict, read again.
				var obj *unstructured.Unstructured
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					var err error
					if obj, err = c.Get(ctx, "a", metav1.GetOptions{}); err != nil {
						return err
					}
					obj.SetAnnotations(map[string]string{"updated": "yes"})
					_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					t.Fatalf("update: %v", err)
				}
				obj.SetAnnotations(map[string]string{"updated": "stale"})
				if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
					t.Errorf("update with a stale resourceVersion: got %v, want Conflict", err)
				}
				apply := framework.NewObject(apiVersion, r.Kind, "d", r.Body)
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
				gone("get after delete NotFound", func() bool {
					_, err := c.Get(ctx, "a", metav1.GetOptions{})
					return apierrors.IsNotFound(err)
				})
				if err := c.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
					t.Fatalf("deletecollection: %v", err)
				}
				// Priority and fairness's bootstrap objects aside: the
				// server's ensurer puts them back every minute, as
				// kube-apiserver's does, and may have just done so.
				gone("list after deletecollection empty", func() bool {
					list, err = c.List(ctx, metav1.ListOptions{})
					if err != nil {
						t.Fatalf("list after deletecollection: %v", err)
					}
					return !slices.ContainsFunc(list.Items, func(o unstructured.Unstructured) bool {
						return o.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey] != "true"
					})
				})
			})
		}
	})
}
