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

package integration

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// readme:begin
// TestCronTabController runs a controller-runtime manager against an
// in-process miniapiserver with the project's CRDs installed: its
// reconciler copies each CronTab's spec.replicas into its status.
func TestCronTabController(t *testing.T) {
	s := testserver.Start(t, testserver.WithCRDs("testdata/kubebuilder/config/crd/bases"))
	ctx := t.Context()

	mgr, err := ctrl.NewManager(s.Config, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	kind := schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}
	newCronTab := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kind)
		return u
	}
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).For(newCronTab()).Complete(reconcile.Func(
		func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			ct := newCronTab()
			if err := c.Get(ctx, req.NamespacedName, ct); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			replicas, _, _ := unstructured.NestedInt64(ct.Object, "spec", "replicas")
			if err := unstructured.SetNestedField(ct.Object, replicas, "status", "replicas"); err != nil {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, c.Status().Update(ctx, ct)
		}))
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() { stop(); <-done })

	ct := newCronTab()
	ct.SetNamespace("default")
	ct.SetName("nightly")
	ct.Object["spec"] = map[string]any{"image": "busybox", "replicas": int64(3)}
	if err := c.Create(ctx, ct); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ct), ct); err != nil {
			return false, err
		}
		replicas, _, _ := unstructured.NestedInt64(ct.Object, "status", "replicas")
		return replicas == 3, nil
	})
	if err != nil {
		t.Fatalf("status.replicas never became 3: %v", err)
	}
}

// readme:end

// TestREADMEShowsTheCronTabController keeps the example in
// docs/reference.md (which the README links) this test file's, word for word.
func TestREADMEShowsTheCronTabController(t *testing.T) {
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	_, example, begins := strings.Cut(string(src), "// readme:begin\n")
	example, _, ends := strings.Cut(example, "\n// readme:end")
	if !begins || !ends || !strings.Contains(example, "func TestCronTabController") {
		t.Fatalf("readme_example_test.go has lost its readme:begin and readme:end markers around TestCronTabController")
	}
	if !strings.Contains(string(doc), example) {
		t.Errorf("docs/reference.md does not show TestCronTabController as readme_example_test.go has it:\n%s", example)
	}
}
