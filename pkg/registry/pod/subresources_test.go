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
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	proxymetrics "k8s.io/apiserver/pkg/util/proxy/metrics"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
)

// standIn is an HTTPS server standing in for a kubelet: it records each
// request's method and URI and refuses it, 403 "kubelet says no".
type standIn struct {
	*httptest.Server
	// mu guards asked.
	mu    sync.Mutex
	asked []string
}

const refusal = "kubelet says no"

func newStandIn(t *testing.T) *standIn {
	t.Helper()
	s := &standIn{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.asked = append(s.asked, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		http.Error(w, refusal, http.StatusForbidden)
	}))
	t.Cleanup(s.Close)
	return s
}

// port is the stand-in's port.
func (s *standIn) port(t *testing.T) int32 {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return int32(p)
}

// takeAsked returns what the stand-in was asked since the last call.
func (s *standIn) takeAsked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	asked := s.asked
	s.asked = nil
	return asked
}

// streamFixture: stores of pods and nodes on one MemStorage, holding
// node n1 (its kubelet at 127.0.0.1:port, after an ExternalIP the default
// address types try later), bare (no address), and pods web (app, on
// n1), two (init, a, b), empty (no containers), pending (on no node),
// lost (on node ghost) and stray (on bare).
func streamFixture(t *testing.T, port int32, features ...string) (rest.Getter, rest.Getter) {
	t.Helper()
	p := newPods(t)
	nodes, err := node.New(p.mem.Options("nodes"))
	if err != nil {
		t.Fatal(err)
	}
	nodeStore := nodes.Nodes
	seedNode := func(n *corev1.Node) {
		key, err := nodes.Nodes.KeyFunc(context.Background(), n.Name)
		if err != nil {
			t.Fatal(err)
		}
		p.mem.Seed(t, key, n)
	}
	n1 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	n1.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "192.0.2.1"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	n1.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	n1.Status.DeclaredFeatures = features
	seedNode(n1)
	seedNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}})
	pod := func(name, node string, containers ...string) {
		p.seed(t, modified(validPod(), func(pod *corev1.Pod) {
			pod.Name, pod.Spec.NodeName, pod.Spec.InitContainers, pod.Spec.Containers = name, node, nil, nil
			for _, c := range containers {
				pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c, Image: "nginx"})
			}
		}))
	}
	pod("web", "n1", "app")
	pod("pending", "", "app")
	pod("lost", "ghost", "app")
	pod("stray", "bare", "app")
	pod("empty", "n1")
	p.seed(t, modified(validPod(), func(pod *corev1.Pod) {
		pod.Name, pod.Spec.NodeName = "two", "n1"
		pod.Spec.Containers = []corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "nginx"}}
	}))
	return p.store, nodeStore
}

// newStreams returns the streams of streamFixture, their kubelets the
// stand-in's (whose certificate they do not check, given no CA).
func newStreams(t *testing.T, kubelet *standIn, features ...string) Streams {
	t.Helper()
	pods, nodes := streamFixture(t, kubelet.port(t), features...)
	kubelets, err := NewKubelets(KubeletConfig{Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	return Streams{Pods: pods, Kubelets: kubelets}
}

// requestContext is the context of a request for subresource of pod
// name in namespace default, authorized as verb.
func requestContext(ctx context.Context, verb, subresource, name string) context.Context {
	ctx = genericapirequest.WithNamespace(ctx, "default")
	ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "alice"})
	return genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: verb, APIVersion: "v1",
		Namespace: "default", Resource: "pods", Subresource: subresource, Name: name})
}

// responder writes errors as Status objects, as the generic handler's.
type responder struct{ w http.ResponseWriter }

func (r responder) Object(int, runtime.Object) {}
func (r responder) Error(err error) {
	status := apierrors.APIStatus(apierrors.NewInternalError(err))
	if s, ok := err.(apierrors.APIStatus); ok {
		status = s
	}
	http.Error(r.w, status.Status().Message, int(status.Status().Code))
}

// serve serves c's handler for pod name and opts at a test server,
// with the responder of each request.
func serve(t *testing.T, c rest.Connecter, subresource, name string, opts runtime.Object) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := c.Connect(requestContext(r.Context(), "create", subresource, name), name, opts, responder{w})
		if err != nil {
			responder{w}.Error(err)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// spdyUpgrade sends an SPDY upgrade request (kubectl's fallback) to url
// and returns the answer's status and body.
func spdyUpgrade(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "SPDY/3.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// TestStreamLocations: exec, attach and port forwarding reach the pod's
// kubelet at upstream's path and query (the streams as input, output,
// error and tty, the ports as one comma-separated port), through an SPDY
// upgrade whose refusal comes back as the kubelet gave it.
func TestStreamLocations(t *testing.T) {
	kubelet := newStandIn(t)
	s := newStreams(t, kubelet)
	for _, tc := range []struct {
		name        string
		rest        rest.Connecter
		subresource string
		pod         string
		opts        runtime.Object
		want        string
	}{
		{"exec", &ExecREST{s}, "exec", "web", &corev1.PodExecOptions{Stdout: true, Stderr: true, Command: []string{"ls", "-l"}},
			"POST /exec/default/web/app?command=ls&command=-l&error=1&output=1"},
		{"exec with stdin and tty in a named container", &ExecREST{s}, "exec", "two", &corev1.PodExecOptions{Container: "b", Stdin: true, TTY: true, Command: []string{"sh"}},
			"POST /exec/default/two/b?command=sh&input=1&tty=1"},
		{"exec with no command", &ExecREST{s}, "exec", "web", &corev1.PodExecOptions{}, "POST /exec/default/web/app"},
		{"exec in an init container", &ExecREST{s}, "exec", "two", &corev1.PodExecOptions{Container: "init", Stdout: true, Command: []string{"true"}},
			"POST /exec/default/two/init?command=true&output=1"},
		{"attach", &AttachREST{s}, "attach", "web", &corev1.PodAttachOptions{Stdin: true, Stdout: true, Stderr: true, TTY: true},
			"POST /attach/default/web/app?error=1&input=1&output=1&tty=1"},
		{"port forward", &PortForwardREST{s}, "portforward", "two", &corev1.PodPortForwardOptions{Ports: []int32{80, 443}},
			"POST /portForward/default/two?port=80%2C443"},
		{"port forward with no port", &PortForwardREST{s}, "portforward", "web", &corev1.PodPortForwardOptions{}, "POST /portForward/default/web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := spdyUpgrade(t, serve(t, tc.rest, tc.subresource, tc.pod, tc.opts).URL)
			if code != http.StatusForbidden || body != refusal {
				t.Errorf("got %d %q, want the kubelet's 403 %q", code, body, refusal)
			}
			if got := kubelet.takeAsked(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("the kubelet was asked %q, want [%q]", got, tc.want)
			}
		})
	}
}

// TestStreamNeedsUpgrade: a request that is no upgrade gets upstream's
// 400 and never reaches the kubelet.
func TestStreamNeedsUpgrade(t *testing.T) {
	kubelet := newStandIn(t)
	s := newStreams(t, kubelet)
	resp, err := http.Get(serve(t, &ExecREST{s}, "exec", "web", &corev1.PodExecOptions{Command: []string{"ls"}}).URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(body)) != "Upgrade request required" {
		t.Errorf("got %d %q, want 400 %q", resp.StatusCode, body, "Upgrade request required")
	}
	if got := kubelet.takeAsked(); len(got) != 0 {
		t.Errorf("the kubelet was asked %q, want nothing", got)
	}
}

// TestStreamWebSockets: a WebSocket exec (kubectl's first try) is
// translated to SPDY for a kubelet whose node does not declare
// ExtendWebSocketsToKubelet (kwok's), and passed on as it is to one that
// does; a WebSocket port forwarding is tunnelled over SPDY alike. Each
// is counted as upstream counts it.
func TestStreamWebSockets(t *testing.T) {
	proxymetrics.Register()
	for _, tc := range []struct {
		name     string
		features []string
		want     []string
		wantErr  string
		metric   string
	}{
		{"translated", nil, []string{"POST /exec/default/web/app?command=ls&error=1&output=1", "POST /portForward/default/web?port=80"},
			"Internal error occurred: unable to upgrade connection: " + refusal, "translated_at_apiserver"},
		{"passed on", []string{extendWebSocketsToKubelet}, []string{"GET /exec/default/web/app?command=ls&error=1&output=1", "GET /portForward/default/web?port=80"},
			"", "proxied_to_kubelet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxymetrics.ResetForTest()
			kubelet := newStandIn(t)
			s := newStreams(t, kubelet, tc.features...)
			exec := serve(t, &ExecREST{s}, "exec", "web", &corev1.PodExecOptions{Stdout: true, Stderr: true, Command: []string{"ls"}})
			executor, err := remotecommand.NewWebSocketExecutor(&restclient.Config{Host: exec.URL}, http.MethodGet, exec.URL)
			if err != nil {
				t.Fatal(err)
			}
			err = executor.StreamWithContext(t.Context(), remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard})
			if err == nil || (tc.wantErr != "" && err.Error() != tc.wantErr) {
				t.Errorf("exec: got error %v, want %q", err, tc.wantErr)
			}
			forward := serve(t, &PortForwardREST{s}, "portforward", "web", &corev1.PodPortForwardOptions{Ports: []int32{80}})
			u, _ := url.Parse(forward.URL)
			dialer, err := portforward.NewSPDYOverWebsocketDialer(u, &restclient.Config{Host: forward.URL})
			if err != nil {
				t.Fatal(err)
			}
			if conn, _, err := dialer.Dial("portforward.k8s.io"); err == nil {
				conn.Close()
				t.Error("port forwarding: got a connection, want the kubelet's refusal")
			}
			if got := kubelet.takeAsked(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("the kubelet was asked %q, want %q", got, tc.want)
			}
			want := `# HELP apiserver_websocket_streaming_requests_total [ALPHA] Total number of WebSocket streaming requests (exec/attach/portforward) routed by the API server, labeled by subresource and proxy_type. proxy_type is proxied_to_kubelet when the kubelet handles the request directly; otherwise translated_at_apiserver.
# TYPE apiserver_websocket_streaming_requests_total counter
apiserver_websocket_streaming_requests_total{proxy_type="` + tc.metric + `",subresource="exec"} 1
apiserver_websocket_streaming_requests_total{proxy_type="` + tc.metric + `",subresource="portforward"} 1
`
			if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want), "apiserver_websocket_streaming_requests_total"); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestStreamHandlers: the proxy itself for a kubelet that takes
// WebSockets, as upstream's.
func TestStreamHandlers(t *testing.T) {
	kubelet := newStandIn(t)
	s := newStreams(t, kubelet, extendWebSocketsToKubelet)
	ctx := requestContext(t.Context(), "create", "exec", "web")
	for _, c := range []rest.Connecter{&ExecREST{s}, &AttachREST{s}, &PortForwardREST{s}} {
		opts, _, _ := c.NewConnectOptions()
		h, err := c.Connect(ctx, "web", opts, responder{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := h.(*proxy.UpgradeAwareHandler); !ok {
			t.Errorf("%T: got a %T, want a *proxy.UpgradeAwareHandler", c, h)
		}
	}
}

// TestEnsureAuthorizedForVerb: a WebSocket request, authorized as a get,
// must be allowed to create too, as upstream's
// AuthorizePodWebsocketUpgradeCreatePermission asks.
func TestEnsureAuthorizedForVerb(t *testing.T) {
	for _, tc := range []struct {
		name, verb string
		allow      bool
		wantErr    string
	}{
		{"create needs no second check", "create", false, ""},
		{"get allowed to create", "get", true, ""},
		{"get not allowed to create", "get", false, `pods "web" is forbidden: no create for you`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAuthorizer{allow: tc.allow}
			err := ensureAuthorizedForVerb(requestContext(t.Context(), tc.verb, "exec", "web"), a, "create")
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.wantErr) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
			if tc.verb != "create" && (a.asked == nil || a.asked.GetVerb() != "create" || a.asked.GetSubresource() != "exec" || a.asked.GetUser().GetName() != "alice") {
				t.Errorf("the authorizer was asked %+v, want alice's create of pods/exec", a.asked)
			}
		})
	}
	if err := ensureAuthorizedForVerb(t.Context(), &fakeAuthorizer{}, "create"); !apierrors.IsInternalError(err) {
		t.Errorf("with no request info: got %v, want a 500", err)
	}
}

type fakeAuthorizer struct {
	allow bool
	asked authorizer.Attributes
}

func (a *fakeAuthorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked = attrs
	if a.allow {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no create for you", nil
}
