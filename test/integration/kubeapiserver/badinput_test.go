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
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestBadInput: a flag that cannot be honoured stops the kube-apiserver
// persona at once (an unreachable etcd after 5s): exit code 1, one line of
// error naming the flag (info and warning lines aside: the etcd client
// warns at each retry), and no listener left.
func TestBadInput(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	other := newPKI(t)
	etcd := startEtcd(t)
	sa := []string{"--service-account-issuer=https://x", "--service-account-key-file=" + p.saPub, "--service-account-signing-key-file=" + p.saKey}
	path := persona(t, "kube-apiserver")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown flag", args: []string{"--no-such-flag"}, want: "unknown flag: --no-such-flag"},
		{name: "unknown feature gate", args: append([]string{"--etcd-servers=" + etcd, "--feature-gates=PodCertificateRequest=true,NoSuchGate=true"}, sa...),
			want: "unrecognized feature gate: NoSuchGate"},
		{name: "an API turned off", args: append([]string{"--etcd-servers=" + etcd, "--runtime-config=api/all=true,batch/v1=false"}, sa...),
			want: "--runtime-config batch/v1=false is not supported by miniapiserver: its APIs cannot be turned off"},
		{name: "refused flag", args: append([]string{"--etcd-servers=" + etcd, "--oidc-issuer-url=https://issuer"}, sa...),
			want: "--oidc-issuer-url is not supported by miniapiserver: OIDC authentication is not implemented"},
		{name: "authorization mode", args: append([]string{"--etcd-servers=" + etcd, "--authorization-mode=Webhook"}, sa...),
			want: "--authorization-mode=Webhook: Webhook authorization is not supported by miniapiserver"},
		{name: "admission plugin we lack", args: append([]string{"--etcd-servers=" + etcd, "--enable-admission-plugins=NodeRestriction"}, sa...),
			want: "--enable-admission-plugins: the NodeRestriction admission plugin is not implemented by miniapiserver"},
		{name: "request-header CA missing", args: append([]string{"--etcd-servers=" + etcd, "--requestheader-client-ca-file=" + p.dir + "/none.crt"}, sa...),
			want: "--requestheader-client-ca-file: open " + p.dir + "/none.crt: no such file or directory"},
		{name: "proxy client key of another certificate", args: append([]string{"--etcd-servers=" + etcd, "--proxy-client-cert-file=" + p.tlsCert, "--proxy-client-key-file=" + other.tlsKey}, sa...),
			want: "--proxy-client-cert-file " + p.tlsCert + ", --proxy-client-key-file " + other.tlsKey + ": tls: private key does not match public key"},
		{name: "no etcd servers", args: sa, want: "--etcd-servers must be specified"},
		{name: "unreachable etcd", args: append([]string{"--etcd-servers=http://127.0.0.1:1"}, sa...), want: "--etcd-servers http://127.0.0.1:1: etcd does not answer within 5s"},
		{name: "cert dir not writable", args: append([]string{"--etcd-servers=" + etcd, "--cert-dir=/dev/null/certs"}, sa...), want: "/dev/null"},
		{name: "serving key of another certificate", args: append([]string{"--etcd-servers=" + etcd, "--tls-cert-file=" + p.tlsCert, "--tls-private-key-file=" + other.tlsKey}, sa...),
			want: "--tls-cert-file " + p.tlsCert + ", --tls-private-key-file " + other.tlsKey + ": tls: private key does not match public key"},
		{name: "signing key of no public key", args: []string{"--etcd-servers=" + etcd, "--service-account-issuer=https://x", "--service-account-key-file=" + other.saPub, "--service-account-signing-key-file=" + p.saKey},
			want: "--service-account-signing-key-file " + p.saKey + ": its public key is in no --service-account-key-file"},
		{name: "no issuer", args: []string{"--etcd-servers=" + etcd, "--service-account-key-file=" + p.saPub, "--service-account-signing-key-file=" + p.saKey},
			want: "service-account-issuer is a required flag"},
		{name: "dual-stack service range", args: append([]string{"--etcd-servers=" + etcd, "--service-cluster-ip-range=10.0.0.0/24,fd00::/108"}, sa...),
			want: "dual-stack service ranges are not supported by miniapiserver"},
		{name: "a stray argument", args: []string{"serve"}, want: `"kube-apiserver" does not take any arguments`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := framework.FreePort(t)
			args := append([]string{fmt.Sprintf("--secure-port=%d", port), "--bind-address=127.0.0.1", "--cert-dir=" + t.TempDir()}, tc.args...)
			var out bytes.Buffer
			cmd := exec.Command(path, args...)
			cmd.Stdout, cmd.Stderr = &out, &out
			began := time.Now()
			err := cmd.Run()
			took := time.Since(began)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("got %v, want exit code 1; output:\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("got output:\n%s\nwant it to contain %q", out.String(), tc.want)
			}
			if lines := errorLines(out.String()); lines != 1 {
				t.Errorf("got %d error lines, want 1:\n%s", lines, out.String())
			}
			if took > 7*time.Second {
				t.Errorf("took %s, want under 7s (5s waiting for etcd)", took)
			}
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
				t.Errorf("port %d still taken after the exit: %v", port, err)
			} else {
				l.Close()
			}
		})
	}
}

// errorLines counts the lines of out that are not klog's info or warning
// lines.
func errorLines(out string) int {
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "I") && !strings.HasPrefix(line, "W") {
			n++
		}
	}
	return n
}
