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

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// binDir holds the binaries built for this run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "miniapiserver-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// Every watch cache of every server here compares itself with etcd
	// each second and panics on a mismatch (in-process servers and, by
	// inheritance, the binaries the tests start).
	if _, set := os.LookupEnv(server.ConsistencyCheckerEnv); !set {
		os.Setenv(server.ConsistencyCheckerEnv, "1s")
	}
	code := m.Run()
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

// Path returns the binary's path, building it the first time.
func (b *builtBinary) Path(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		if b.path = os.Getenv(b.env); b.path != "" {
			return
		}
		b.path = filepath.Join(binDir, filepath.Base(b.pkg))
		args := []string{"build", "-o", b.path}
		if b.ldflags != "" {
			script := exec.Command(filepath.Join("..", "..", b.ldflags))
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

// storagePaths are the two ways a server serves reads and watches: from its
// watch cache (the default) and straight from etcd (--watch-cache=false).
var storagePaths = []struct {
	name string
	opts func(*server.Options)
}{
	{"watchcache", func(o *server.Options) { o.WatchCache = true }},
	{"etcd", func(o *server.Options) { o.WatchCache = false }},
}

// forEachStoragePath runs f as the subtests "watchcache" and "etcd"; f passes
// path to start (or testserver.Start) so its server serves that path.
func forEachStoragePath(t *testing.T, f func(t *testing.T, path func(*server.Options))) {
	t.Helper()
	for _, p := range storagePaths {
		t.Run(p.name, func(t *testing.T) { f(t, p.opts) })
	}
}

// start starts an in-process server and returns it with a clientset.
func start(t *testing.T, options ...func(*server.Options)) (*testserver.Server, kubernetes.Interface) {
	t.Helper()
	s := testserver.Start(t, options...)
	return s, kubernetes.NewForConfigOrDie(s.Config)
}

// kubectl runs the real kubectl against s and returns its stdout; it fails the
// test on a non-zero exit unless the caller expects one (wantErr).
func kubectl(t *testing.T, s *testserver.Server, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := runKubectl(t, s, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func runKubectl(t *testing.T, s *testserver.Server, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBinary.Path(t), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.KubeconfigPath, "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// watchCacheOn reports whether path selects the watch cache.
func watchCacheOn(path func(*server.Options)) bool {
	o := server.NewOptions()
	path(o)
	return o.WatchCache
}
