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

package envtest_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/envtest"
)

// TestCheckpointBetweenSpecs resets one environment between specs, as a
// suite's BeforeEach/AfterEach would: each spec starts from the state
// after Start, whatever the one before it made or deleted.
func TestCheckpointBetweenSpecs(t *testing.T) {
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdBases}, ErrorIfCRDPathMissing: true}
	if err := env.Checkpoint(t.Context(), "before-start"); err == nil {
		t.Error("Checkpoint before Start: no error, want one")
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	ctx := t.Context()
	if err := env.Checkpoint(ctx, "suite"); err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	cronTabs := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}).Namespace("default")
	for spec := range 3 {
		// Every spec finds the state of the checkpoint, and changes it.
		if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "spec", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("spec %d: GET of the ConfigMap the spec before made: %v, want NotFound", spec, err)
		}
		if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "spec"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ct := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": map[string]any{"name": "spec"}}}
		if _, err := cronTabs.Create(ctx, ct, metav1.CreateOptions{}); err != nil {
			t.Fatalf("spec %d: %v", spec, err)
		}
		// AfterEach.
		res, err := env.Restore(ctx, "suite")
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted != 2 {
			t.Errorf("spec %d: restore deleted %d keys, want 2 (the ConfigMap and the CronTab)", spec, res.Deleted)
		}
	}
	if err := env.DeleteCheckpoint("suite"); err != nil {
		t.Fatal(err)
	}
}
