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

package resources

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestNodeProxy: nodes/proxy answers as kube-apiserver's: a request is
// carried, method, path and query, to the kubelet endpoint the node
// reports (here a stand-in kubelet on the machine's global unicast
// address), or to another port the request names; a node whose address
// is loopback gets upstream's 400 "address not allowed"; a node that is
// not there, its 404; an id that does not parse, its 400.
func TestNodeProxy(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	addr := globalUnicastAddress(t)
	var mu sync.Mutex
	var asked []string
	serve := func(name string) *httptest.Server {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			asked = append(asked, fmt.Sprintf("%s %s %s %s", name, r.Method, r.URL.RequestURI(), body))
			mu.Unlock()
			fmt.Fprintf(w, "%s: %s", name, r.URL.Path)
		}))
		l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		srv.Listener = l
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv
	}
	port := func(srv *httptest.Server) string {
		_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
		return p
	}
	kubelet, other := serve("kubelet"), serve("other")
	kubeletPort, _ := strconv.Atoi(port(kubelet))
	ns := framework.CreateNamespace(t, client) // for unique node names
	node := func(name, address string) string {
		t.Helper()
		n, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: address}}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(kubeletPort)
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return n.Name
	}
	reachable, loopback := node("reachable", addr), node("loopback", "127.0.0.1")

	proxied := func(id, path string) ([]byte, error) {
		return client.CoreV1().RESTClient().Post().AbsPath("/api/v1/nodes", id, "proxy", path).Param("q", "1").Body([]byte("sent")).DoRaw(ctx)
	}
	// Errors are read as a Status (DoRaw leaves the body undecoded).
	refused := func(id string) error {
		return client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", id, "proxy", "healthz").Do(ctx).Error()
	}
	if out := framework.Kubectl(t, s, "", "get", "--raw", "/api/v1/nodes/"+reachable+"/proxy/metrics/cadvisor?x=y"); out != "kubelet: /metrics/cadvisor" {
		t.Errorf("kubectl get --raw nodes/%s/proxy/metrics/cadvisor: %q, want the kubelet's answer", reachable, out)
	}
	if out, err := proxied("https:"+reachable+":"+port(other), "healthz"); err != nil || string(out) != "other: /healthz" {
		t.Errorf("a POST to another port of the node: %q, %v; want the other server's answer", out, err)
	}
	mu.Lock()
	want := []string{"kubelet GET /metrics/cadvisor?x=y ", "other POST /healthz?q=1 sent"}
	if fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("the node's servers were asked %q, want %q", asked, want)
	}
	mu.Unlock()

	for _, tc := range []struct {
		id   string
		want func(error) bool
		msg  string
	}{
		{loopback, apierrors.IsBadRequest, "address not allowed"},
		{ns + "-ghost", apierrors.IsNotFound, fmt.Sprintf(`nodes "%s-ghost" not found`, ns)},
		{"a:b:c:d", apierrors.IsBadRequest, `invalid node request "a:b:c:d"`},
	} {
		if err := refused(tc.id); !tc.want(err) || err.Error() != tc.msg {
			t.Errorf("nodes/%s/proxy: %v, want upstream's %q", tc.id, err, tc.msg)
		}
	}
}

// globalUnicastAddress is an IPv4 address of this machine that nodes/proxy
// proxies to (upstream refuses loopback and link-local ones).
func globalUnicastAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatalf("no global unicast IPv4 address among %v: nodes/proxy proxies to no other", addrs)
	return ""
}
