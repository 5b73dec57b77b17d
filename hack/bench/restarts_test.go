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
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
	"github.com/miniapiserver/miniapiserver/test/informertest"
)

var restartObjects = flag.Int("restart-objects", 100, "ConfigMaps, Secrets and Pods (of each) that RestartResync's informers watch")

const (
	restartLeases = 100             // Leases written while the informers watch
	restartStop   = 2 * time.Minute // SIGTERM to SIGKILL: past kube-apiserver's minute-long wait for open watches
)

// BenchmarkRestartResync is KEP-1904: informertest's ConfigMap, Secret and
// Pod informers (-restart-objects of each in the namespace) across a
// restart of the server on the same data dir and port, each op on a fresh
// data dir; once they have synced, restartLeases Leases, which none
// watches, move etcd's revision on, then the server stops (SIGTERM) and
// starts again: kube-apiserver alone, on its running etcd. ns/op is from
// the restarted server's ready until every informer has added an object
// created after it; relists-RESOURCE is what each informer listed again
// (LISTs and watch-lists); stop-ns/op the stop with the watches open
// (kube-apiserver's waits for them up to a minute, killed after
// restartStop);
// restart-ns/op the restart's exec to ready. resumption=on is each
// server's default (kube-apiserver has no gate); resumption=off is
// miniapiserver with --feature-gates=EfficientWatchResumption=false. Both
// run with --etcd-compaction-interval=0: no compaction during an op.
func BenchmarkRestartResync(b *testing.B) {
	b.Run("resumption=on", func(b *testing.B) {
		onEach(b, func(b *testing.B, kind driver.Kind) {
			skipSlowUpstream(b, kind)
			benchRestarts(b, kind)
		})
	})
	b.Run("resumption=off", func(b *testing.B) {
		b.Run("server=mini", func(b *testing.B) { benchRestarts(b, driver.Mini, "--feature-gates=EfficientWatchResumption=false") })
	})
}

func benchRestarts(b *testing.B, kind driver.Kind, args ...string) {
	totals := map[string]float64{}
	for b.Loop() {
		restartUnderInformers(b, kind, driver.WithArgs(args, "--etcd-compaction-interval=0"), totals)
	}
	reportMeans(b, totals)
}

// restartUnderInformers is one op of BenchmarkRestartResync, which it adds
// to totals.
func restartUnderInformers(b *testing.B, kind driver.Kind, args []string, totals map[string]float64) {
	ctx := klog.NewContext(b.Context(), logr.Discard()) // no logs of the watches the restart ends
	dir := env.Dir("restart-" + string(kind))
	s, err := env.Start(ctx, kind, dir, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := errors.Join(s.Stop(), os.RemoveAll(dir)); err != nil {
			b.Error(err)
		}
	}()
	client, hc, err := s.OwnClient() // the informers' watches stream across the restart
	if err != nil {
		b.Fatal(err)
	}
	defer driver.CloseIdle(hc)
	// Pods need the namespace's default ServiceAccount, which nothing else creates here.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := client.CoreV1().ServiceAccounts(driver.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	for _, resource := range []string{"configmaps", "secrets", "pods"} {
		err := driver.ForEach(ctx, *restartObjects, workers, func(ctx context.Context, i int) error {
			return createWatched(ctx, client, resource, driver.Namespace, driver.ConfigMapName(i))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	running, stop := context.WithCancel(ctx)
	defer stop()
	informers := informertest.StartCountingInformers(running, b, client)
	err = driver.ForEach(ctx, restartLeases, workers, func(ctx context.Context, i int) error {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-lease-%04d", i)}}
		_, err := client.CoordinationV1().Leases(driver.Namespace).Create(ctx, lease, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}

	if err := s.StopAPIWithin(restartStop); err != nil {
		b.Fatal(err)
	}
	totals["stop-ns/op"] += float64(s.Stopped)
	restarted := time.Now()
	if err := s.Restart(ctx); err != nil {
		b.Fatal(err)
	}
	ready := restarted.Add(s.Ready) // its ready line, or first 200 from /readyz
	totals["restart-ns/op"] += float64(s.Ready)
	for _, inf := range informers {
		ns, name, _ := cache.SplitMetaNamespaceKey(inf.Last)
		if err := createWatched(ctx, s.Client(), inf.Resource, ns, name); err != nil {
			b.Fatal(err)
		}
	}
	var last time.Time
	for _, inf := range informers {
		if added := inf.WaitFor(b); added.After(last) {
			last = added
		}
	}
	totals["ns/op"] += float64(last.Sub(ready))
	for _, inf := range informers {
		totals["relists-"+inf.Resource] += float64(inf.Relists())
	}
}

// createWatched creates an object of resource (configmaps, secrets or pods).
func createWatched(ctx context.Context, client kubernetes.Interface, resource, namespace, name string) error {
	meta, opts, core := metav1.ObjectMeta{Name: name}, metav1.CreateOptions{}, client.CoreV1()
	var err error
	switch resource {
	case "configmaps":
		_, err = core.ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}}, opts)
	case "secrets":
		_, err = core.Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"k": "v"}}, opts)
	case "pods":
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
		_, err = core.Pods(namespace).Create(ctx, &corev1.Pod{ObjectMeta: meta, Spec: spec}, opts)
	default:
		err = errors.New("not a watched resource")
	}
	if err != nil {
		return fmt.Errorf("creating %s %s: %w", resource, name, err)
	}
	return nil
}
