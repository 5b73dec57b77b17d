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

package bench

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// restoreStored is how many ConfigMaps BenchmarkRestore's server holds.
const restoreStored = 10000

// BenchmarkRestore times the restore of a checkpoint of an in-process
// server (pkg/testserver) holding restoreStored ConfigMaps, after a test
// changed some of them: a third made, a third updated, a third deleted.
// kube-apiserver has nothing to compare with.
func BenchmarkRestore(b *testing.B) {
	if *onlyKind == string(driver.Upstream) {
		b.Skip("kube-apiserver has no checkpoints")
	}
	s, err := testserver.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Stop() })
	client := kubernetes.NewForConfigOrDie(s.Config)
	ctx := b.Context()
	if err := createRestoreFixture(ctx, client); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Checkpoint(ctx, "fixture"); err != nil {
		b.Fatal(err)
	}
	for _, changed := range []int{100, 1000} {
		b.Run(fmt.Sprintf("stored=%d/changed=%d", restoreStored, changed), func(b *testing.B) {
			settle(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := changeConfigMaps(ctx, client, changed); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := s.Restore(ctx, "fixture")
				if err != nil {
					b.Fatal(err)
				}
				if n := res.Deleted + res.Recreated + res.Reverted; n < changed {
					b.Fatalf("restore wrote %d keys (%+v), want at least the %d changed", n, res, changed)
				}
			}
		})
	}
}

func createRestoreFixture(ctx context.Context, client kubernetes.Interface) error {
	return driver.ForEach(ctx, restoreStored, workers, func(ctx context.Context, i int) error {
		return createConfigMap(ctx, client, fmt.Sprintf("stored-%05d", i), nil, false)
	})
}

// changeConfigMaps makes n changes: n/3 ConfigMaps made, n/3 updated, the
// rest deleted (of the fixture's, which the restore before put back).
func changeConfigMaps(ctx context.Context, client kubernetes.Interface, n int) error {
	cms := client.CoreV1().ConfigMaps(driver.Namespace)
	return driver.ForEach(ctx, n, workers, func(ctx context.Context, i int) error {
		switch {
		case i < n/3:
			return createConfigMap(ctx, client, fmt.Sprintf("made-%05d", i), nil, false)
		case i < 2*n/3:
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("stored-%05d", i)}, Data: map[string]string{"k": "changed"}}
			_, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
			return err
		default:
			return cms.Delete(ctx, fmt.Sprintf("stored-%05d", i), metav1.DeleteOptions{})
		}
	})
}
