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

package pod

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	genericrest "k8s.io/apiserver/pkg/registry/generic/rest"

	"github.com/miniapiserver/miniapiserver/test/pkitest"
)

// TestKubeletAddress: a node's kubelet is at its first address of the
// first preferred type it has, at the port it reports or the configured
// one; no preferred address is upstream's error.
func TestKubeletAddress(t *testing.T) {
	_, nodes := streamFixture(t, 0) // n1 reports no port
	for _, tc := range []struct {
		name    string
		types   []corev1.NodeAddressType
		port    int
		want    string
		wantErr string
	}{
		{"upstream's defaults", nil, 0, "127.0.0.1:10250", ""},
		{"external first", []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP}, 12345, "192.0.2.1:12345", ""},
		{"no address of the types", []corev1.NodeAddressType{corev1.NodeHostName}, 0, "",
			"no preferred addresses found; known addresses: [{ExternalIP 192.0.2.1} {InternalIP 127.0.0.1}]"},
		{"no types", []corev1.NodeAddressType{}, 0, "", "no preferred addresses found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := NewKubelets(KubeletConfig{Nodes: nodes, PreferredAddressTypes: tc.types, Port: tc.port})
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.kubelet(t.Context(), "n1")
			if got.host != tc.want || (err == nil) != (tc.wantErr == "") || err != nil && !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("got %q, %v; want %q, %q", got.host, err, tc.want, tc.wantErr)
			}
		})
	}
	if _, err := NewKubelets(KubeletConfig{}); err == nil || err.Error() != "kubelets: no Nodes" {
		t.Errorf("with no Nodes: got %v, want an error naming them", err)
	}
}

// TestKubeletClientCertificate: the kubelets are shown the client
// certificate and checked against the CA (kube-apiserver's
// --kubelet-client-certificate, --kubelet-client-key and
// --kubelet-certificate-authority), for logs and for upgraded streams
// alike; without a CA their certificates are not checked, nor with a
// log's insecureSkipTLSVerifyBackend.
func TestKubeletClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca, caFile := newCA(t, dir, "kubelet-ca")
	_, otherCAFile := newCA(t, dir, "other-ca")
	certFile, keyFile := issue(t, ca, dir, "apiserver-kubelet-client", x509.ExtKeyUsageClientAuth)
	servingCert, servingKey := issue(t, ca, dir, "kubelet", x509.ExtKeyUsageServerAuth)
	serving, err := tls.LoadX509KeyPair(servingCert, servingKey)
	if err != nil {
		t.Fatal(err)
	}
	// The kubelet asks for a client certificate of its CA and answers
	// with the name in it: a log, or the refusal of an upgrade.
	kubelet := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hello := "hello " + r.TLS.PeerCertificates[0].Subject.CommonName
		if r.Header.Get("Upgrade") != "" {
			http.Error(w, hello, http.StatusForbidden)
			return
		}
		io.WriteString(w, hello)
	}))
	kubelet.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	kubelet.StartTLS()
	t.Cleanup(kubelet.Close)
	pods, nodes := streamFixture(t, (&standIn{Server: kubelet}).port(t))

	const hello = "hello apiserver-kubelet-client"
	for _, tc := range []struct {
		name             string
		config           KubeletConfig
		insecureBackend  bool
		wantErr          string // "": the kubelet's hello
		wantStreamStatus int    // 0: no exec
	}{
		{"client certificate and CA", KubeletConfig{CertFile: certFile, KeyFile: keyFile, CAFile: caFile}, false, "", http.StatusForbidden},
		{"client certificate, no CA", KubeletConfig{CertFile: certFile, KeyFile: keyFile}, false, "", http.StatusForbidden},
		{"no client certificate", KubeletConfig{CAFile: caFile}, false, "certificate required", http.StatusInternalServerError},
		{"another CA", KubeletConfig{CertFile: certFile, KeyFile: keyFile, CAFile: otherCAFile}, false, "certificate signed by unknown authority", http.StatusInternalServerError},
		{"another CA, insecureSkipTLSVerifyBackend", KubeletConfig{CertFile: certFile, KeyFile: keyFile, CAFile: otherCAFile}, true, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.config.Nodes = nodes
			k, err := NewKubelets(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			ctx := requestContext(t.Context(), "get", "log", "web")
			obj, err := (&LogREST{Pods: pods, Kubelets: k}).Get(ctx, "web", &corev1.PodLogOptions{InsecureSkipTLSVerifyBackend: tc.insecureBackend})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readLog(t, obj.(*genericrest.LocationStreamer))
			if tc.wantErr == "" && (err != nil || got != hello) || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("log: got %q, %v; want %q, or an error with %q", got, err, hello, tc.wantErr)
			}
			if tc.wantStreamStatus == 0 {
				return
			}
			code, body := spdyUpgrade(t, serve(t, &ExecREST{Streams{Pods: pods, Kubelets: k}}, "exec", "web", &corev1.PodExecOptions{Command: []string{"ls"}}).URL)
			want := hello
			if tc.wantErr != "" {
				want = tc.wantErr
			}
			if code != tc.wantStreamStatus || !strings.Contains(body, want) {
				t.Errorf("exec: got %d %q, want %d with %q", code, body, tc.wantStreamStatus, want)
			}
		})
	}
}

// readLog reads the log streamer gives.
func readLog(t *testing.T, streamer *genericrest.LocationStreamer) (string, error) {
	t.Helper()
	r, _, _, err := streamer.InputStream(t.Context(), "v1", "text/plain")
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

// newCA makes a CA named name and writes its certificate to dir.
func newCA(t *testing.T, dir, name string) (*pkitest.CA, string) {
	t.Helper()
	ca := pkitest.NewCA(t, name)
	return ca, pkitest.WriteFile(t, dir, name+".crt", ca.CertPEM())
}

// issue writes a certificate of ca for name (and 127.0.0.1), and its key,
// to dir.
func issue(t *testing.T, ca *pkitest.CA, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM := ca.Issue(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}})
	return pkitest.WriteFile(t, dir, name+".crt", certPEM), pkitest.WriteFile(t, dir, name+".key", keyPEM)
}
