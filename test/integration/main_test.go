package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// Paths of the binaries TestMain builds (or takes from $KUBECTL and $MINIAPISERVER).
var kubectlPath, serverPath string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "miniapiserver-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, b := range []struct {
		path *string
		env  string
		pkg  string
	}{
		{&kubectlPath, "KUBECTL", "github.com/miniapiserver/miniapiserver/hack/tools/kubectl"},
		{&serverPath, "MINIAPISERVER", "github.com/miniapiserver/miniapiserver/cmd/miniapiserver"},
	} {
		if p := os.Getenv(b.env); p != "" {
			*b.path = p
			continue
		}
		*b.path = filepath.Join(dir, filepath.Base(b.pkg))
		cmd := exec.Command("go", "build", "-o", *b.path, b.pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", b.pkg, err)
			return 1
		}
	}
	return m.Run()
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
	cmd := exec.CommandContext(ctx, kubectlPath, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.KubeconfigPath, "HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}
