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

package durability

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestAcknowledgedWritesSurviveSIGKILL kills the real binary with SIGKILL in
// the middle of a stream of writes; after a restart every write that got a
// 2xx must still be there.
func TestAcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	proc, client := startBinary(t, dataDir)

	const writers, killAfter = 4, 300
	var mu sync.Mutex
	var acked []string
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d-%05d", w, i)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": name}}
				if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked = append(acked, name)
				n := len(acked)
				mu.Unlock()
				if n == killAfter {
					_ = proc.Process.Signal(syscall.SIGKILL)
					cancel() // writes in flight now were never acknowledged
				}
			}
		})
	}
	wg.Wait()
	_ = proc.Wait()
	if len(acked) < killAfter {
		t.Fatalf("only %d writes acknowledged before the server died", len(acked))
	}

	_, client = startBinary(t, dataDir)
	list, err := client.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	for _, cm := range list.Items {
		stored[cm.Name] = cm.Data["v"]
	}
	for _, name := range acked {
		if stored[name] != name {
			t.Errorf("acknowledged write %s lost after SIGKILL and restart", name)
		}
	}
	t.Logf("%d acknowledged writes, %d stored after restart", len(acked), len(stored))
}

// startBinary runs the built miniapiserver on dataDir, waits for its ready
// line and returns it with a client; the process is killed when the test ends.
func startBinary(t *testing.T, dataDir string) (*exec.Cmd, kubernetes.Interface) {
	t.Helper()
	cmd := exec.Command(framework.ServerBinaryPath(t), "--data-dir", dataDir, "--secure-port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if strings.Contains(lines.Text(), " ready on ") {
				ready <- lines.Text()
			}
		}
		close(ready)
	}()
	select {
	case line, ok := <-ready:
		if !ok {
			t.Fatal("server exited before it was ready")
		}
		if !strings.Contains(line, "export KUBECONFIG="+dataDir) {
			t.Errorf("ready line %q does not tell where the kubeconfig is", line)
		}
	case <-time.After(time.Minute):
		t.Fatal("server not ready after a minute")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", dataDir+"/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // no client-side rate limit: the writes must outpace the kill
	return cmd, kubernetes.NewForConfigOrDie(cfg)
}
