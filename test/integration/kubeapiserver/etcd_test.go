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

package kubeapiserver

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestEtcdPersona: linked as etcd, the binary is etcd: its --version (as
// kwokctl parses it), its --help (envtest looks for --unsafe-no-fsync in
// it), the single-dash spellings fabric8's kube-api-test passes, and its
// refusal of a flag it does not know.
func TestEtcdPersona(t *testing.T) {
	t.Parallel()
	etcd := persona(t, "etcd")
	out, err := exec.Command(etcd, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^etcd Version: 3\.\d+\.\d+$`).Match(out) {
		t.Errorf("--version: got %q, want etcd's", out)
	}
	help, _ := exec.Command(etcd, "--help").CombinedOutput()
	if !regexp.MustCompile(`(?m)^\s*--unsafe-no-fsync\b`).Match(help) {
		t.Errorf("--help has no --unsafe-no-fsync line:\n%s", help)
	}
	var exit *exec.ExitError
	if out, err := exec.Command(etcd, "--no-such-flag").CombinedOutput(); !errors.As(err, &exit) || !strings.Contains(string(out), "flag provided but not defined: -no-such-flag") {
		t.Errorf("an unknown flag: got %v, %s; want etcd's refusal", err, out)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d", framework.FreePort(t))
	p := start(t, etcd, "-data-dir", t.TempDir(), "-listen-client-urls", url, "-advertise-client-urls", url,
		"-listen-peer-urls", "http://127.0.0.1:0", "-wal-dir", t.TempDir())
	waitOK(t, p, http.DefaultClient, url+"/health")
}

// TestKubeAPIServerVersionAndHelp: --version is kube-apiserver's line (kwokctl
// parses it), and --help lists no --insecure-port (envtest's flag discovery
// then leaves it out).
func TestKubeAPIServerVersionAndHelp(t *testing.T) {
	t.Parallel()
	kas := persona(t, "kube-apiserver")
	out, err := exec.Command(kas, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^Kubernetes v1\.\d+\.\d+\n$`).Match(out) {
		t.Errorf("--version: got %q, want %q", out, "Kubernetes v1.x.y\n")
	}
	help, err := exec.Command(kas, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage:\n  kube-apiserver [flags]", "Generic flags:", "Etcd flags:", "Secure serving flags:", "Authentication flags:", "Misc flags:", "      --etcd-servers strings"} {
		if !strings.Contains(string(help), want) {
			t.Errorf("--help has no %q", want)
		}
	}
	if regexp.MustCompile(`(?m)^\s*--insecure-port\b`).Match(help) {
		t.Errorf("--help lists --insecure-port (kube-apiserver 1.37 has none)")
	}
}
