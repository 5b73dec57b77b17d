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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// standIns are stand-in pods' servers, plain and TLS, on the machine's
// global unicast address and on loopback (where a request that got
// through a refusal would be answered): each records what it is asked and
// answers with its name and the path.
type standIns struct {
	t     *testing.T
	mu    sync.Mutex
	asked []string
}

// serve starts the server name on host; tls: with TLS.
func (s *standIns) serve(name, host string, tls bool) int32 {
	t := s.t
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.asked = append(s.asked, fmt.Sprintf("%s %s %s %s", name, r.Method, r.URL.RequestURI(), body))
		s.mu.Unlock()
		fmt.Fprintf(w, "%s: %s", name, r.URL.Path)
	}))
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(l.Addr().String())
	port, _ := strconv.Atoi(p)
	return int32(port)
}

// check reports what the servers were asked since the last check.
func (s *standIns) check(want ...string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if fmt.Sprint(s.asked) != fmt.Sprint(want) {
		s.t.Errorf("the stand-ins were asked %q, want %q", s.asked, want)
	}
	s.asked = nil
}

// createPod creates pod name in ns, whose container declares ports, with
// the status podIP ip ("": none).
func createPod(t *testing.T, client kubernetes.Interface, ns, name, ip string, ports ...int32) {
	t.Helper()
	ctx := t.Context()
	c := corev1.Container{Name: "app", Image: "nginx"}
	for _, p := range ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: p})
	}
	p, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip == "" {
		return
	}
	p.Status.PodIP = ip
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// refusal is the error of a GET of path, read as a Status.
func refusal(t *testing.T, client kubernetes.Interface, path ...string) error {
	return client.CoreV1().RESTClient().Get().AbsPath(path...).Do(t.Context()).Error()
}

// TestPodProxy: pods/proxy answers as kube-apiserver's: a request is
// carried, method, path, query and body, to the pod's IP (here the
// machine's global unicast address, where stand-ins listen), at the port
// the request names, or at the first port its containers declare, over
// TLS for "https:"; a pod with no IP, or whose IP is loopback, gets
// upstream's 400 "address not allowed"; a pod that is not there, its 404;
// an id that does not parse, its 400.
func TestPodProxy(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ns := framework.CreateNamespace(t, client)
	addr := globalUnicastAddress(t)
	servers := &standIns{t: t}
	plain, secure := servers.serve("plain", addr, false), servers.serve("secure", addr, true)
	onLoopback := servers.serve("loopback", "127.0.0.1", false)
	createPod(t, client, ns, "web", addr, plain)
	createPod(t, client, ns, "pending", "", plain)
	createPod(t, client, ns, "loopback", "127.0.0.1", onLoopback)
	pods := "/api/v1/namespaces/" + ns + "/pods/"

	if out := framework.Kubectl(t, s, "", "get", "--raw", fmt.Sprintf("%sweb:%d/proxy/some/path?x=y", pods, plain)); out != "plain: /some/path" {
		t.Errorf("kubectl get --raw pods/web:%d/proxy/some/path: %q, want the pod's answer", plain, out)
	}
	// No port: the container's.
	out, err := client.CoreV1().RESTClient().Post().AbsPath(pods, "web", "proxy", "healthz").Param("q", "1").Body([]byte("sent")).DoRaw(t.Context())
	if err != nil || string(out) != "plain: /healthz" {
		t.Errorf("a POST to pods/web/proxy/healthz: %q, %v; want the pod's answer", out, err)
	}
	out, err = client.CoreV1().Pods(ns).ProxyGet("https", "web", strconv.Itoa(int(secure)), "tls", nil).DoRaw(t.Context())
	if err != nil || string(out) != "secure: /tls" {
		t.Errorf("pods/https:web:%d/proxy/tls: %q, %v; want the TLS server's answer", secure, out, err)
	}
	servers.check("plain GET /some/path?x=y ", "plain POST /healthz?q=1 sent", "secure GET /tls ")

	for _, tc := range []struct {
		id   string
		want func(error) bool
		msg  string
	}{
		{"pending", apierrors.IsBadRequest, "address not allowed"},
		{"loopback", apierrors.IsBadRequest, "address not allowed"},
		{fmt.Sprintf("loopback:%d", onLoopback), apierrors.IsBadRequest, "address not allowed"},
		{"ghost", apierrors.IsNotFound, `pods "ghost" not found`},
		{"a:b:c:d", apierrors.IsBadRequest, `invalid pod request "a:b:c:d"`},
	} {
		if err := refusal(t, client, pods, tc.id, "proxy", "healthz"); !tc.want(err) || err.Error() != tc.msg {
			t.Errorf("pods/%s/proxy: %v, want upstream's %q", tc.id, err, tc.msg)
		}
	}
	servers.check() // none reached
}

// TestServiceProxy: services/proxy answers as kube-apiserver's: a request
// is carried, method, path, query and body, to a ready endpoint of the
// Service's EndpointSlices whose pod has its address (here a pod on the
// machine's global unicast address, where stand-ins listen), at the
// slice's port of the name the request gives, or of the Service's port of
// the number it gives, over TLS for "https:"; a Service with no endpoint
// that will do gets upstream's 503 "no endpoints available", a port number
// the Service has not its 503 "no service port", a Service that is not
// there its 404, an id that does not parse its 400.
func TestServiceProxy(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	bystander, _ := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	addr := globalUnicastAddress(t)
	servers := &standIns{t: t}
	plain, secure := servers.serve("plain", addr, false), servers.serve("secure", addr, true)
	createPod(t, client, ns, "backend", addr)
	createPod(t, client, ns, "moved", "192.0.2.254") // its endpoint is stale

	service := func(name string) {
		t.Helper()
		if _, err := client.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "tls", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	slice := func(service string, eps ...discoveryv1.Endpoint) {
		t.Helper()
		if _, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{GenerateName: service + "-", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   eps,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(plain)}, {Name: ptr.To("tls"), Port: ptr.To(secure)}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	endpoint := func(pod string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod}}
	}
	for _, name := range []string{"web", "empty", "not-ready", "stale", "untargeted"} {
		service(name)
	}
	slice("web", endpoint("backend", true))
	slice("not-ready", endpoint("backend", false))
	slice("stale", endpoint("moved", true))
	untargeted := endpoint("backend", true)
	untargeted.TargetRef = nil
	slice("untargeted", untargeted)
	services := "/api/v1/namespaces/" + ns + "/services/"

	if out := framework.Kubectl(t, s, "", "get", "--raw", services+"web:http/proxy/some/path?x=y"); out != "plain: /some/path" {
		t.Errorf("kubectl get --raw services/web:http/proxy/some/path: %q, want the endpoint's answer", out)
	}
	// A port number is the Service's port's, here 80: "http".
	out, err := client.CoreV1().RESTClient().Post().AbsPath(services, "web:80", "proxy", "healthz").Param("q", "1").Body([]byte("sent")).DoRaw(ctx)
	if err != nil || string(out) != "plain: /healthz" {
		t.Errorf("a POST to services/web:80/proxy/healthz: %q, %v; want the endpoint's answer", out, err)
	}
	out, err = client.CoreV1().Services(ns).ProxyGet("https", "web", "tls", "tls", nil).DoRaw(ctx)
	if err != nil || string(out) != "secure: /tls" {
		t.Errorf("services/https:web:tls/proxy/tls: %q, %v; want the TLS server's answer", out, err)
	}
	servers.check("plain GET /some/path?x=y ", "plain POST /healthz?q=1 sent", "secure GET /tls ")

	noEndpoints := func(svc string) string { return fmt.Sprintf("no endpoints available for service %q", svc) }
	for _, tc := range []struct {
		id   string
		want func(error) bool
		msg  string
	}{
		{"empty:http", apierrors.IsServiceUnavailable, noEndpoints("empty")},
		{"not-ready:http", apierrors.IsServiceUnavailable, noEndpoints("not-ready")},
		{"stale:http", apierrors.IsServiceUnavailable, noEndpoints("stale")},
		{"untargeted:http", apierrors.IsServiceUnavailable, noEndpoints("untargeted")},
		{"web", apierrors.IsServiceUnavailable, noEndpoints("web")}, // no port named ""
		{"web:nope", apierrors.IsServiceUnavailable, noEndpoints("web")},
		{"web:8080", apierrors.IsServiceUnavailable, `no service port 8080 found for service "web"`},
		{"ghost:80", apierrors.IsNotFound, `services "ghost" not found`},
		{"ghost:http", apierrors.IsServiceUnavailable, noEndpoints("ghost")}, // as upstream: a port name reads no Service
		{"a:b:c:d", apierrors.IsBadRequest, `invalid service request "a:b:c:d"`},
	} {
		if err := refusal(t, client, services, tc.id, "proxy", "healthz"); !tc.want(err) || err.Error() != tc.msg {
			t.Errorf("services/%s/proxy: %v, want upstream's %q", tc.id, err, tc.msg)
		}
	}
	servers.check() // none reached
	// The endpoints skipped are logged, as upstream logs them, to the test
	// of the server that skipped them, not of another running beside it.
	invalid := func(line string) bool { return strings.Contains(line, "isn't valid") }
	if !slices.ContainsFunc(s.LoggedErrors(), invalid) {
		t.Errorf("the server logged %q, want the endpoints it skipped", s.LoggedErrors())
	}
	if errs := bystander.LoggedErrors(); slices.ContainsFunc(errs, invalid) {
		t.Errorf("another server's test got %q, want none of this server's lines", errs)
	}
}
