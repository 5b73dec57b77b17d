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

package framework

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// Kubectl runs the real kubectl against s and returns its stdout; it fails the
// test on a non-zero exit (RunKubectl, for a caller that expects one).
func Kubectl(t *testing.T, s *testserver.Server, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := RunKubectl(t, s, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// RunKubectl runs the real kubectl against s and returns its stdout, its
// stderr and how it exited.
func RunKubectl(t *testing.T, s *testserver.Server, stdin string, args ...string) (string, string, error) {
	t.Helper()
	kubectl := KubectlPath(t) // built first, out of the run's minute
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.KubeconfigPath, "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// ContainsField reports whether a line of out (kubectl's table or list)
// has want as one of its whitespace-separated fields.
func ContainsField(out, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		for _, f := range strings.Fields(line) {
			if f == want {
				return true
			}
		}
	}
	return false
}
