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
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
	"github.com/miniapiserver/miniapiserver/pkg/envtest"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// restoreStored is how many ConfigMaps BenchmarkRestore's server holds.
const restoreStored = 10000

// BenchmarkRestore times the restore of a checkpoint of an in-process
// server (pkg/testserver) holding restoreStored ConfigMaps, after a test
// changed some of them: a third made, a third updated, a third deleted.
// changes-ns is how long the test took to make those changes through the
// API (16 clients at once). kube-apiserver has nothing to compare with.
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
			var changing time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				start := time.Now()
				if err := changeConfigMaps(ctx, client, changed); err != nil {
					b.Fatal(err)
				}
				changing += time.Since(start)
				b.StartTimer()
				res, err := s.Restore(ctx, "fixture")
				if err != nil {
					b.Fatal(err)
				}
				if n := res.Deleted + res.Recreated + res.Reverted; n < changed {
					b.Fatalf("restore wrote %d keys (%+v), want at least the %d changed", n, res, changed)
				}
			}
			// The same number of writes, made by the test through the API.
			b.ReportMetric(float64(changing)/float64(b.N), "changes-ns")
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

// suiteSpecs is how many specs BenchmarkSpecSuite's suite has.
const suiteSpecs = 50

// BenchmarkSpecSuite runs a suite of suiteSpecs specs, each of which
// expects the state after the environment started, creates ten ConfigMaps
// and lists them: on one pkg/envtest environment restored to a checkpoint
// after each spec (server=mini/reset=restore), on a pkg/envtest
// environment of its own per spec (server=mini/reset=fresh-env), and on a
// controller-runtime envtest of its own per spec running the -upstream
// kube-apiserver (server=upstream/reset=fresh-env, in the first round
// only). ns/op is the suite's wall time, the environments' starts and
// stops included.
func BenchmarkSpecSuite(b *testing.B) {
	log.SetLogger(logr.Discard())
	onEach(b, func(b *testing.B, kind driver.Kind) {
		if kind == driver.Upstream {
			if *round > 1 {
				b.Skipf("round %d: a suite of fresh envtests on kube-apiserver takes minutes; it runs in the first round only", *round)
			}
			b.Run("reset=fresh-env", func(b *testing.B) {
				for b.Loop() {
					freshEnvSuite(b, func() environment {
						return &crenvtest.Environment{BinaryAssetsDirectory: *upstreamDir, ControlPlaneStartTimeout: stockStartTimeout}
					})
				}
			})
			return
		}
		b.Run("reset=restore", func(b *testing.B) {
			for b.Loop() {
				env := &envtest.Environment{}
				cfg, err := env.Start()
				if err != nil {
					b.Fatal(err)
				}
				if err := env.Checkpoint(b.Context(), "suite"); err != nil {
					b.Fatal(err)
				}
				client := kubernetes.NewForConfigOrDie(cfg)
				for range suiteSpecs {
					if err := spec(b.Context(), client); err != nil {
						b.Fatal(err)
					}
					if _, err := env.Restore(b.Context(), "suite"); err != nil {
						b.Fatal(err)
					}
				}
				if err := env.Stop(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("reset=fresh-env", func(b *testing.B) {
			for b.Loop() {
				freshEnvSuite(b, func() environment { return &envtest.Environment{} })
			}
		})
	})
}

// freshEnvSuite runs the suite's specs each on an environment of its own.
func freshEnvSuite(b *testing.B, newEnv func() environment) {
	for range suiteSpecs {
		env := newEnv()
		cfg, err := env.Start()
		if err != nil {
			b.Fatal(err)
		}
		if err := spec(b.Context(), kubernetes.NewForConfigOrDie(cfg)); err != nil {
			b.Fatal(err)
		}
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// spec is one spec of BenchmarkSpecSuite: it fails if the spec before
// left its ConfigMaps.
func spec(ctx context.Context, client kubernetes.Interface) error {
	const made = 10
	for i := range made {
		if err := createConfigMap(ctx, client, fmt.Sprintf("spec-%d", i), map[string]string{"spec": "true"}, false); err != nil {
			return err
		}
	}
	l, err := client.CoreV1().ConfigMaps(driver.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "spec"})
	if err == nil && len(l.Items) != made {
		err = fmt.Errorf("listed %d ConfigMaps of specs, want the %d this one made", len(l.Items), made)
	}
	return err
}
