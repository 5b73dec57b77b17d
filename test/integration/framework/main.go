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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// binDir holds the binaries built for this run; Main removes it.
var binDir string

// Main is the TestMain of an integration test package: it runs m's tests
// with a directory for the binaries they build, and with the watch cache
// of every server (in-process servers and, by inheritance, the binaries
// the tests start) comparing itself with etcd every 10 seconds and when
// its server stops, and panicking on a mismatch, unless the environment
// sets that period already. (Each check LISTs every resource from etcd,
// which the race detector makes dear.) Each of
// after runs once the tests have; an error of one fails the run.
func Main(m *testing.M, after ...func() error) {
	dir, err := os.MkdirTemp("", "miniapiserver-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	if _, set := os.LookupEnv(server.ConsistencyCheckerEnv); !set {
		os.Setenv(server.ConsistencyCheckerEnv, "10s")
	}
	code := m.Run()
	for _, f := range after {
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// A binary is built on first use (so fuzz workers and tests that need none
// build none), or taken from an environment variable.
type builtBinary struct {
	env, pkg string
	// ldflags, if set, is a script (from the module root) printing the -ldflags to build with.
	ldflags string
	once    sync.Once
	path    string
	err     error
}

var (
	// kubectl is stamped with its version as `make build` stamps it.
	kubectlBinary = &builtBinary{env: "KUBECTL", pkg: "github.com/miniapiserver/miniapiserver/hack/tools/kubectl", ldflags: "hack/kubectl-ldflags.sh"}
	serverBinary  = &builtBinary{env: "MINIAPISERVER", pkg: "github.com/miniapiserver/miniapiserver/cmd/miniapiserver"}
)

// KubectlPath returns the path of the real kubectl (from $KUBECTL, or
// built the first time).
func KubectlPath(t *testing.T) string {
	t.Helper()
	return kubectlBinary.Path(t)
}

// ServerBinaryPath returns the path of the miniapiserver binary (from
// $MINIAPISERVER, or built the first time).
func ServerBinaryPath(t *testing.T) string {
	t.Helper()
	return serverBinary.Path(t)
}

// Path returns the binary's path, building it the first time.
func (b *builtBinary) Path(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		if b.path = os.Getenv(b.env); b.path != "" {
			return
		}
		if binDir == "" {
			b.err = errors.New("no directory for the binaries: the package's TestMain must call framework.Main")
			return
		}
		b.path = filepath.Join(binDir, filepath.Base(b.pkg))
		args := []string{"build", "-o", b.path}
		if b.ldflags != "" {
			root, err := moduleRoot()
			if err != nil {
				b.err = err
				return
			}
			script := exec.Command(filepath.Join(root, b.ldflags))
			script.Dir = root
			var stderr bytes.Buffer
			script.Stderr = &stderr
			flags, err := script.Output()
			if err != nil {
				b.err = fmt.Errorf("%s: %w\n%s", b.ldflags, err, stderr.Bytes())
				return
			}
			args = append(args, "-ldflags", strings.TrimSpace(string(flags)))
		}
		out, err := exec.Command("go", append(args, b.pkg)...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("building %s: %w\n%s", b.pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// moduleRoot is the directory of the go.mod above the working directory
// (a test's is its package's).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
