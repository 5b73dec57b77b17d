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

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func TestFlagErrorsStopBeforeStarting(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown gate", []string{"--feature-gates=NoSuchGate=true"}, "unrecognized feature gate: NoSuchGate"},
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag"},
		{"stray argument", []string{"serve"}, "unexpected arguments"},
		{"bad bind address", []string{"--bind-address=nowhere", "--data-dir=" + t.TempDir()}, "not an IP address"},
		{"bad port", []string{"--secure-port=70000", "--data-dir=" + t.TempDir()}, "--secure-port"},
		{"short history window", []string{"--watch-cache-history-window=10s", "--data-dir=" + t.TempDir()}, "--watch-cache-history-window"},
		{"empty history", []string{"--watch-cache-history-size=0", "--data-dir=" + t.TempDir()}, "--watch-cache-history-size"},
		{"unknown authorization mode", []string{"--authorization-mode=ABAC", "--data-dir=" + t.TempDir()}, "--authorization-mode"},
		{"etcd TLS without servers", []string{"--etcd-cafile=ca.crt", "--data-dir=" + t.TempDir()}, "need --etcd-servers"},
		{"etcd cert without key", []string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-certfile=c.crt", "--data-dir=" + t.TempDir()}, "go together"},
		{"relative etcd prefix", []string{"--etcd-prefix=registry", "--data-dir=" + t.TempDir()}, "--etcd-prefix"},
		{"missing token file", []string{"--token-auth-file=/no/such/file", "--data-dir=" + t.TempDir()}, "--token-auth-file"},
		{"kubeconfig without a user", []string{"kubeconfig", "--data-dir=" + t.TempDir()}, "--user is required"},
		{"kubeconfig of a data dir never started", []string{"kubeconfig", "--user=bob", "--data-dir=" + t.TempDir()}, "admin kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args, func() {})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q): got %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	if err := run(t.Context(), []string{"--version"}, func() {}); err != nil {
		t.Errorf("--version: got %v", err)
	}
}

// TestSignalWhileStartingIsAGracefulStop gives run a context already
// cancelled, as by a SIGTERM in the first instant: it starts etcd and stops
// it again, then returns nil (exit 0) without logging an error about the stop.
func TestSignalWhileStartingIsAGracefulStop(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var err error
	stderr := captureStderr(t, func() {
		err = run(ctx, []string{"--data-dir=" + t.TempDir(), "--secure-port=0"}, func() {})
	})
	if err != nil {
		t.Errorf("run: got %v, want nil", err)
	}
	for _, line := range strings.Split(stderr, "\n") {
		// etcd logs this at error level on a new member's first start,
		// stopped or not, and retries until it succeeds.
		if strings.Contains(line, `"msg":"failed to update storage version"`) {
			continue
		}
		if strings.HasPrefix(line, "E") || strings.HasPrefix(line, "F") || strings.Contains(line, `"level":"error"`) || strings.Contains(line, "panic") {
			t.Errorf("logged while stopping: %s", line)
		}
	}
}

// captureStderr returns what f writes to os.Stderr (klog's and etcd's log).
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	saved := os.Stderr
	os.Stderr = tmp
	defer func() { os.Stderr = saved }()
	f()
	klog.Flush()
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditLog: the command takes kube-apiserver's --audit-* flags; with a
// policy and a log path, a create is in the log.
func TestAuditLog(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "audit.log")
	dataDir := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--data-dir=" + dataDir, "--secure-port=0", "--audit-policy-file=" + policy, "--audit-log-path=" + log},
			sync.OnceFunc(func() { close(ready) }))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("run ended before it was ready: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), `"verb":"create"`) && strings.Contains(string(b), `"name":"audited"`), nil
	}); err != nil {
		t.Errorf("the create is not in the audit log %s", log)
	}
}
