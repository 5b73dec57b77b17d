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
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/hack/bench/driver"
)

var (
	clusterNodes = flag.Int("cluster-nodes", 10, "kwok nodes of BenchmarkCluster's clusters (110 Pods each, kwok's default)")
	clusterPods  = flag.Int("cluster-pods", 1000, "replicas of the Deployment BenchmarkCluster rolls out")
	clusterArgs  = flag.String("cluster-args", "", "kwokctl create cluster flags for BenchmarkCluster's clusters, space separated (--disable-qps-limits: the controllers' clients unthrottled)")
)

// BenchmarkCluster brings up hack/cluster.sh's cluster (kwokctl's binary
// runtime: kube-controller-manager, kube-scheduler, kwok's -cluster-nodes
// nodes) on miniapiserver (server=mini) and on kube-apiserver with its etcd
// (server=upstream, with -upstream), then rolls out a Deployment of one
// Pod and scales it to -cluster-pods. ns/op is from the command to the
// first Pod ready; rollout-ns/op is the scale to all ready;
// control-plane-rss-bytes and -pss-bytes are the API server's and etcd's
// resident memory and proportional set size after it (controlPlaneMemory).
func BenchmarkCluster(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "cluster", "kube-controller-manager")); err != nil {
		b.Skip("no bin/cluster: make cluster (or hack/cluster.sh binaries) builds kube-controller-manager, kube-scheduler and kwok")
	}
	onEach(b, func(b *testing.B, kind driver.Kind) {
		totals := map[string]float64{}
		for i := 0; b.Loop(); i++ {
			for metric, v := range clusterRun(b, root, kind, i) {
				totals[metric] += v
			}
		}
		for metric, v := range totals {
			b.ReportMetric(v/float64(b.N), metric)
		}
	})
}

// clusterRun is one op of BenchmarkCluster; it returns the metrics but
// ns/op, which the benchmark's timer takes.
func clusterRun(b *testing.B, root string, kind driver.Kind, i int) map[string]float64 {
	dir := b.TempDir()
	name := fmt.Sprintf("bench-%s-%d", kind, i)
	args := []string{"up", "--name", name, "--nodes", strconv.Itoa(*clusterNodes)}
	if kind == driver.Upstream {
		args = append(args, "--upstream")
	}
	args = append(append(args, "--"), strings.Fields(*clusterArgs)...)
	script := func(args ...string) error {
		cmd := exec.Command(filepath.Join(root, "hack", "cluster.sh"), args...)
		server, err := filepath.Abs(*serverBin)
		if err != nil {
			return err
		}
		cmd.Env = append(os.Environ(), "CLUSTER_DIR="+dir, "MINIAPISERVER="+server)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("hack/cluster.sh %s: %w\n%s", strings.Join(args, " "), err, out.Bytes())
		}
		return nil
	}
	b.Cleanup(func() {
		if err := script("down", "--name", name); err != nil {
			b.Error(err)
		}
	})
	if err := script(args...); err != nil {
		b.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "clusters", name, "kubeconfig.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, -1
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := b.Context()
	labels := map[string]string{"app": "bench"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}},
	}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	waitReady(ctx, b, client, 1)
	b.StopTimer()
	defer b.StartTimer()
	start := time.Now()
	if _, err := client.AppsV1().Deployments("default").Patch(ctx, "bench", "application/merge-patch+json",
		fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, *clusterPods), metav1.PatchOptions{}); err != nil {
		b.Fatal(err)
	}
	waitReady(ctx, b, client, int32(*clusterPods))
	rollout := time.Since(start)
	rss, pss, err := controlPlaneMemory(filepath.Join(dir, "clusters", name))
	if err != nil {
		b.Fatal(err)
	}
	return map[string]float64{"rollout-ns/op": float64(rollout), "control-plane-rss-bytes": float64(rss), "control-plane-pss-bytes": float64(pss)}
}

// waitReady waits until the Deployment has n ready replicas (kwok makes a
// Pod Running and Ready at once), for at most 10 minutes. It reads the
// Deployment, not its Pods: a LIST of 1,000 Pods at each poll would load
// the server it measures.
func waitReady(ctx context.Context, b *testing.B, client kubernetes.Interface, n int32) {
	b.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments("default").Get(ctx, "bench", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas >= n, nil
	})
	if err != nil {
		b.Fatalf("waiting for %d ready replicas: %v", n, err)
	}
}

// controlPlaneMemory sums the resident memory (RSS) and proportional set
// size (PSS) of the kube-apiserver and etcd processes kwokctl runs from
// dir. Ours are the same binary, linked twice: the pages of it both have
// read are in memory once, and counted in each one's RSS, but split
// between them in their PSS.
func controlPlaneMemory(dir string) (rss, pss int64, err error) {
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		base := filepath.Base(string(argv0))
		if !strings.HasPrefix(string(argv0), dir) || (base != "kube-apiserver" && base != "etcd") {
			continue
		}
		rollup, err := os.ReadFile(filepath.Join(filepath.Dir(p), "smaps_rollup"))
		if err != nil {
			continue
		}
		r, rerr := rollupBytes(rollup, "Rss:")
		q, qerr := rollupBytes(rollup, "Pss:")
		if err := errors.Join(rerr, qerr); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", filepath.Dir(p), err)
		}
		rss, pss = rss+r, pss+q
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("found %d kube-apiserver and etcd processes under %s, want 2", found, dir)
	}
	return rss, pss, nil
}

// rollupBytes is the bytes of the line of /proc/PID/smaps_rollup that
// starts with field ("Rss:": "Rss:   1234 kB").
func rollupBytes(rollup []byte, field string) (int64, error) {
	for line := range strings.Lines(string(rollup)) {
		if kb, ok := strings.CutPrefix(line, field); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("no %s line", field)
}
