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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestRestoreRefusesWritesInNamespacesItDeleted: once a restore has
// answered, a create in a namespace it deleted (a controller still acting
// on what it saw before) is refused as upstream refuses one in a missing
// namespace, not stored with no namespace. NamespaceLifecycle admits from
// its informer's cache: the restore answers once that has seen the
// namespace go.
func TestRestoreRefusesWritesInNamespacesItDeleted(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	const rounds = 20
	for i := range rounds {
		checkpoint := fmt.Sprintf("round-%d", i)
		if _, err := s.Checkpoint(ctx, checkpoint); err != nil {
			t.Fatal(err)
		}
		ns := framework.CreateNamespace(t, client)
		framework.CreateCMIn(t, client, ns, "made", nil)
		if _, err := s.Restore(ctx, checkpoint); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stale"}}
		_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("round %d: creating a ConfigMap in namespace %s right after the restore deleted it: %v, want NotFound", i, ns, err)
		}
		if err := s.DeleteCheckpoint(checkpoint); err != nil {
			t.Fatal(err)
		}
	}
}
