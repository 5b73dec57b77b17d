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

// Package cluster tests the composition hack/cluster.sh brings up: the
// miniapiserver binary as kube-apiserver and etcd, with the real
// kube-controller-manager, kube-scheduler and kwok's nodes behind it
// (kwokctl's binary runtime). Its tests run when bin/cluster holds those
// binaries (make cluster, or hack/cluster.sh binaries) and are skipped,
// saying so, when it does not.
package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// nodes is the number of kwok nodes of the cluster.
const nodes = 3

func TestMain(m *testing.M) {
	framework.Main(m, shared.down)
}

// cluster is the one cluster the package's tests share, brought up by the
// first test that asks for it.
type cluster struct {
	once       sync.Once
	root, dir  string
	kubeconfig string
	client     kubernetes.Interface
	err        error
}

var shared cluster

// needCluster returns the shared cluster, bringing it up the first time;
// it skips t when bin/cluster does not hold the upstream binaries. When t
// fails, the end of each component's log is t's.
func needCluster(t *testing.T) *cluster {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"kube-controller-manager", "kube-scheduler", "kwok", "kwokctl"} {
		if _, err := os.Stat(filepath.Join(root, "bin", "cluster", b)); err != nil {
			t.Skipf("no %s in bin/cluster: make cluster (or hack/cluster.sh binaries) builds kube-controller-manager, kube-scheduler and kwok from the module proxy", b)
		}
	}
	c := &shared
	kubectl, server := framework.KubectlPath(t), framework.ServerBinaryPath(t)
	c.once.Do(func() { c.err = c.up(root, server, kubectl) })
	if c.err != nil {
		t.Fatal(c.err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.logTails(t)
		}
	})
	return c
}

// up brings the cluster up with hack/cluster.sh in a directory of its own.
func (c *cluster) up(root, server, kubectl string) error {
	dir, err := os.MkdirTemp("", "miniapiserver-cluster-")
	if err != nil {
		return err
	}
	c.root, c.dir = root, dir
	// A node is Unknown 20s after its last heartbeat (kwokctl's 3m20s, for
	// thousands of nodes, would hold TestNodeNotReady that long); kwok
	// renews its nodes' leases within that, and only of the nodes kwokctl
	// made (so a test may make one nobody heartbeats). The components
	// alternate: kwokctl v0.8.0 files a component's second --extra-args
	// by the first one's position among all of them (an index out of
	// range unless the n-th component's first comes n-th).
	out, err := c.script(server, kubectl, "up", "--name", "test", "--nodes", fmt.Sprint(nodes), "--", "--node-lease-duration-seconds=10",
		"--extra-args=kwok-controller=manage-all-nodes=false", "--extra-args=kube-controller-manager=node-monitor-grace-period=20s",
		"--extra-args=kwok-controller=manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--extra-args=kube-controller-manager=node-monitor-period=2s")
	if err != nil {
		return fmt.Errorf("hack/cluster.sh up: %w\n%s", err, out)
	}
	c.kubeconfig = filepath.Join(dir, "clusters", "test", "kubeconfig.yaml")
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return err
	}
	c.client, err = kubernetes.NewForConfig(cfg)
	return err
}

// script runs hack/cluster.sh with args on the cluster's directory.
func (c *cluster) script(server, kubectl string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.root, "hack", "cluster.sh"), args...)
	cmd.Env = append(os.Environ(), "CLUSTER_DIR="+c.dir, "MINIAPISERVER="+server, "KUBECTL="+kubectl)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// down deletes the cluster and its directory, if it was brought up; it
// fails if a process of the cluster is left.
func (c *cluster) down() error {
	if c.dir == "" {
		return nil
	}
	defer os.RemoveAll(c.dir)
	if out, err := c.script("", "", "down", "--name", "test"); err != nil {
		return fmt.Errorf("hack/cluster.sh down: %w\n%s", err, out)
	}
	if out, err := exec.Command("pgrep", "-af", c.dir).Output(); err == nil {
		return fmt.Errorf("processes left after hack/cluster.sh down:\n%s", out)
	}
	return nil
}

// logTails logs the last lines of each component's log.
func (c *cluster) logTails(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(c.dir, "clusters", "test", "logs", "*.log"))
	for _, log := range logs {
		data, err := os.ReadFile(log)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		t.Logf("--- %s (last 40 lines)\n%s", filepath.Base(log), strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// logLines returns the lines of component's log that start with prefix.
func (c *cluster) logLines(t *testing.T, component, prefix string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(c.dir, "clusters", "test", "logs", component+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), prefix) {
			lines = append(lines, s.Text())
		}
	}
	return lines
}

// kubectl runs kubectl on the cluster and returns its output, failing t
// on an error.
func (c *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.tryKubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// tryKubectl runs kubectl on the cluster and returns its output and error.
func (c *cluster) tryKubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), framework.KubectlPath(t), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// portForward runs kubectl port-forward from a free local port to port
// of pod in ns, makes one connection to the local port once kubectl
// reports it, reads it to its end, and returns kubectl's stderr and exit
// once it exits (for a pod whose port cannot be forwarded).
func (c *cluster) portForward(t *testing.T, ns, pod string, port int) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, framework.KubectlPath(t), "--kubeconfig", c.kubeconfig, "-n", ns, "port-forward", pod, fmt.Sprintf("0:%d", port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	forwarding := regexp.MustCompile(`^Forwarding from 127\.0\.0\.1:(\d+) -> `)
	local := ""
	for local == "" && lines.Scan() {
		if m := forwarding.FindStringSubmatch(lines.Text()); m != nil {
			local = m[1]
		}
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	if local != "" {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", local))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
		conn.Close()
	}
	<-drained
	err = cmd.Wait()
	return stderr.String(), err
}

// namespace creates a namespace for t, deleted when t ends.
func (c *cluster) namespace(t *testing.T) string {
	t.Helper()
	ns, err := c.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// poll waits until cond holds, for at most timeout, failing t with what
// and cond's last error if it does not.
func poll(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}
