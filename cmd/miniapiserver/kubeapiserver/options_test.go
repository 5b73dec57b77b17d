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
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// honoured are the flags the server acts on as kube-apiserver does (each
// has its test in test/integration/kubeapiserver or here); every other
// flag is refused or has no effect, with a reason.
var honoured = []string{
	// generic: k8s.io/apiserver's ServerRunOptions.ApplyTo
	"advertise-address", "cors-allowed-origins", "strict-transport-security-directives", "external-hostname",
	"max-requests-inflight", "max-mutating-requests-inflight", "request-timeout", "goaway-chance", "livez-grace-period",
	"min-request-timeout", "storage-initialization-timeout", "shutdown-delay-duration", "shutdown-send-retry-after",
	"shutdown-watch-termination-grace-period", "feature-gates",
	// etcd
	"etcd-servers", "etcd-prefix", "etcd-cafile", "etcd-certfile", "etcd-keyfile", "etcd-compaction-interval",
	"watch-cache", "enable-garbage-collector",
	// secure serving: k8s.io/apiserver's SecureServingOptions.ApplyTo
	"bind-address", "cert-dir", "http2-max-streams-per-connection", "permit-address-sharing", "permit-port-sharing",
	"secure-port", "tls-cert-file", "tls-cipher-suites", "tls-min-version", "tls-private-key-file", "tls-sni-cert-key",
	"tls-curve-preferences", "disable-http2-serving",
	// audit: k8s.io/apiserver's AuditOptions.ApplyTo
	"audit-log-batch-buffer-size", "audit-log-batch-max-size", "audit-log-batch-max-wait", "audit-log-batch-throttle-burst",
	"audit-log-batch-throttle-enable", "audit-log-batch-throttle-qps", "audit-log-compress", "audit-log-format",
	"audit-log-maxage", "audit-log-maxbackup", "audit-log-maxsize", "audit-log-mode", "audit-log-path",
	"audit-log-truncate-enabled", "audit-log-truncate-max-batch-size", "audit-log-truncate-max-event-size",
	"audit-log-version", "audit-policy-file", "audit-webhook-batch-buffer-size", "audit-webhook-batch-initial-backoff",
	"audit-webhook-batch-max-size", "audit-webhook-batch-max-wait", "audit-webhook-batch-throttle-burst",
	"audit-webhook-batch-throttle-enable", "audit-webhook-batch-throttle-qps", "audit-webhook-config-file",
	"audit-webhook-initial-backoff", "audit-webhook-mode", "audit-webhook-truncate-enabled",
	"audit-webhook-truncate-max-batch-size", "audit-webhook-truncate-max-event-size", "audit-webhook-version",
	// features
	"profiling", "contention-profiling", "debug-socket-path", "enable-priority-and-fairness",
	// authentication and authorization
	"api-audiences", "anonymous-auth", "client-ca-file", "service-account-key-file", "service-account-issuer", "service-account-jwks-uri",
	"requestheader-client-ca-file", "requestheader-allowed-names", "requestheader-username-headers", "requestheader-group-headers",
	"requestheader-extra-headers-prefix", "requestheader-uid-headers",
	"proxy-client-cert-file", "proxy-client-key-file", "enable-aggregator-routing", "aggregator-reject-forwarding-redirect",
	"token-auth-file", "authorization-mode", "service-account-signing-key-file",
	// admission
	"admission-control", "enable-admission-plugins", "disable-admission-plugins", "admission-control-config-file",
	"default-not-ready-toleration-seconds", "default-unreachable-toleration-seconds",
	// metrics, logs and traces: component-base's and k8s.io/apiserver's
	"allow-metric-labels", "allow-metric-labels-manifest", "disabled-metrics", "show-hidden-metrics-for-version",
	"log-flush-frequency", "log-json-info-buffer-size", "log-json-split-stream", "log-text-info-buffer-size",
	"log-text-split-stream", "logging-format", "v", "vmodule", "tracing-config-file",
	// misc
	"service-cluster-ip-range", "service-node-port-range", "allow-privileged",
	// misc: the kubelet client (pods/log, /exec, /attach, /portforward)
	"kubelet-client-certificate", "kubelet-client-key", "kubelet-certificate-authority", "kubelet-preferred-address-types",
	"kubelet-port",
	// API enablement: only the test controls' group (testControls)
	"runtime-config",
	// global
	"help", "version",
}

// flagNames are the command's flags, the deprecated ones (which --help
// hides) too if deprecated.
func flagNames(t *testing.T, deprecated bool) []string {
	t.Helper()
	cmd := NewCommand(t.Context(), func() {})
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if deprecated || !f.Hidden {
			names = append(names, f.Name)
		}
	})
	slices.Sort(names)
	return names
}

// TestFlagsAreKubeAPIServers: the command has kube-apiserver 1.37.2's
// flags, no more and no fewer (testdata: the flags of its --help, which
// shows no deprecated flag).
func TestFlagsAreKubeAPIServers(t *testing.T) {
	b, err := os.ReadFile("testdata/kube-apiserver-1.37.2-flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(b))
	if diff := cmp.Diff(want, flagNames(t, false)); diff != "" {
		t.Errorf("flags (-kube-apiserver's +ours):\n%s", diff)
	}
}

// TestEveryFlagIsAccountedFor: each flag is honoured, refused with a
// reason, or said to have no effect here, with a reason; none twice.
func TestEveryFlagIsAccountedFor(t *testing.T) {
	for _, name := range flagNames(t, true) {
		_, r := refused[name]
		_, n := noEffect[name]
		h := slices.Contains(honoured, name)
		if count := btoi(r) + btoi(n) + btoi(h); count != 1 {
			t.Errorf("--%s: honoured %t, refused %t, no effect %t: want exactly one", name, h, r, n)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFlagsAreDocumented: docs/kube-apiserver.md lists every flag refused
// or taken with no effect.
func TestFlagsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../../docs/kube-apiserver.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]string{refused, noEffect} {
		for name := range m {
			if !strings.Contains(string(b), "`--"+name+"`") {
				t.Errorf("--%s is not in docs/kube-apiserver.md", name)
			}
		}
	}
}

// TestRuntimeConfig: --runtime-config may ask for what is served anyway
// (api/all, api/ga, api/beta, api/alpha and served group versions on), and
// turns the test controls on or off; turning an API off, or on one that is
// not served, is refused, naming the entry.
func TestRuntimeConfig(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    bool
		wantErr string
	}{
		{"", false, ""},
		{"testcontrol.miniapiserver.io/v1alpha1=true", true, ""},
		{"testcontrol.miniapiserver.io/v1alpha1", true, ""},
		{"testcontrol.miniapiserver.io/v1alpha1=false", false, ""},
		{"testcontrol.miniapiserver.io/v1alpha1=maybe", false, "testcontrol.miniapiserver.io/v1alpha1=maybe"},
		{"api/all=true", false, ""},
		{"api/all=true,api/ga=true,api/beta,api/alpha=true,apps/v1=true,api/v1=true,autoscaling/v2,apiextensions.k8s.io/v1=true,storage.k8s.io/v1/csinodes=true", false, ""},
		{"api/all=true,testcontrol.miniapiserver.io/v1alpha1=true", true, ""},
		{"api/all=false", false, "--runtime-config api/all=false is not supported by miniapiserver: its APIs cannot be turned off"},
		{"apps/v1=false", false, "--runtime-config apps/v1=false is not supported by miniapiserver"},
		{"storage.k8s.io/v1/csinodes=false", false, "--runtime-config storage.k8s.io/v1/csinodes=false is not supported"},
		{"resource.k8s.io/v1alpha3=true", false, "--runtime-config resource.k8s.io/v1alpha3 is not supported by miniapiserver: it does not serve resource.k8s.io/v1alpha3"},
		{"api/legacy=true", false, "it does not serve api/legacy"},
		{"apps=true", false, "runtime-config invalid key apps"},
		{"v1=true", false, "runtime-config invalid key v1"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			for _, f := range o.Flags().FlagSets {
				fs.AddFlagSet(f)
			}
			if err := fs.Parse([]string{"--runtime-config=" + tc.value}); err != nil {
				t.Fatal(err)
			}
			got, _, err := o.runtimeConfig()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %t, %v; want %t", got, err, tc.want)
			}
		})
	}
}

// serverOptionsOf returns the server's options of the command line args.
func serverOptionsOf(t *testing.T, args []string) *server.Options {
	t.Helper()
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range o.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	opts, err := o.serverOptions()
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

// TestKubeletFlags: the kubelet client's flags reach the server's
// options, with kube-apiserver's defaults when not given.
func TestKubeletFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want server.KubeletOptions
	}{
		{"defaults", nil, server.KubeletOptions{PreferredAddressTypes: []string{"Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"}, Port: 10250}},
		{"all given", []string{"--kubelet-client-certificate=client.crt", "--kubelet-client-key=client.key", "--kubelet-certificate-authority=ca.crt",
			"--kubelet-preferred-address-types=InternalIP,Hostname", "--kubelet-port=10251", "--kubelet-timeout=1s", "--kubelet-read-only-port=0"},
			server.KubeletOptions{ClientCertificate: "client.crt", ClientKey: "client.key", CertificateAuthority: "ca.crt",
				PreferredAddressTypes: []string{"InternalIP", "Hostname"}, Port: 10251}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := serverOptionsOf(t, tc.args)
			if diff := cmp.Diff(tc.want, opts.Kubelet); diff != "" {
				t.Errorf("kubelet options (-want +got):\n%s", diff)
			}
			if tc.args == nil {
				if diff := cmp.Diff(server.NewOptions().Kubelet, opts.Kubelet); diff != "" {
					t.Errorf("defaults differ from the server's (-server's +persona's):\n%s", diff)
				}
			}
		})
	}
}

// TestPriorityAndFairnessFlag: --enable-priority-and-fairness reaches the
// server's options, on by default as kube-apiserver's.
func TestPriorityAndFairnessFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"--enable-priority-and-fairness=false"}, false}, {[]string{"--enable-priority-and-fairness"}, true}} {
		if opts := serverOptionsOf(t, tc.args); opts.PriorityAndFairness != tc.want {
			t.Errorf("%q: PriorityAndFairness %t, want %t", tc.args, opts.PriorityAndFairness, tc.want)
		}
	}
}
