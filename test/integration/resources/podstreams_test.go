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
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestPodStreams: pods/exec, pods/attach and pods/portforward answer as
// kube-apiserver's, through kubectl: each reaches the kubelet endpoint the
// pod's node reports (here a stand-in kubelet that refuses every stream)
// at upstream's path and query, kubectl's WebSockets translated to SPDY;
// upstream's errors for a pod on no node or on a node that is not there;
// and a WebSocket exec (authorized as a get) needs create too.
func TestPodStreams(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	var mu sync.Mutex
	var asked []string
	kubelet := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		http.Error(w, "kubelet says no", http.StatusForbidden)
	}))
	defer kubelet.Close()
	takeAsked := func() []string {
		mu.Lock()
		defer mu.Unlock()
		a := asked
		asked = nil
		return a
	}
	_, port, _ := net.SplitHostPort(kubelet.Listener.Addr().String())
	kubeletPort, _ := strconv.Atoi(port)
	node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(kubeletPort)
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "lost"}, Spec: corev1.PodSpec{NodeName: "ghost", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
	} {
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// kubectl port-forward asks for a Running pod.
	web, err := client.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Status.Phase = corev1.PodRunning
	if _, err := client.CoreV1().Pods(ns).UpdateStatus(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args      []string
		wantErr   string
		wantAsked []string
	}{
		{[]string{"exec", "web", "--", "ls", "-l"}, "error: Internal error occurred: unable to upgrade connection: kubelet says no",
			[]string{"POST /exec/" + ns + "/web/app?command=ls&command=-l&error=1&output=1"}},
		{[]string{"attach", "web"}, "error: Internal error occurred: unable to upgrade connection: kubelet says no", []string{"POST /attach/" + ns + "/web/app?error=1&output=1"}},
		// kubectl tunnels SPDY over a WebSocket, then, refused, tries SPDY.
		{[]string{"port-forward", "web", "0:80"}, "error: error upgrading connection: unable to upgrade connection: kubelet says no",
			[]string{"POST /portForward/" + ns + "/web", "POST /portForward/" + ns + "/web"}},
		{[]string{"exec", "pending", "--", "ls"}, "error: unable to upgrade connection: pod pending does not have a host assigned", nil},
		{[]string{"exec", "lost", "--", "ls"}, `error: unable to upgrade connection: pods "ghost" not found`, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, err := framework.RunKubectl(t, s, "", append([]string{"-n", ns}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n") // kubectl attach's banner first
			if got := lines[len(lines)-1]; err == nil || got != tc.wantErr {
				t.Errorf("got %v, %q; want %q", err, got, tc.wantErr)
			}
			if got := takeAsked(); strings.Join(got, "\n") != strings.Join(tc.wantAsked, "\n") {
				t.Errorf("the kubelet was asked %q, want %q", got, tc.wantAsked)
			}
		})
	}

	// bob may get pods and pods/exec, not create pods/exec: a WebSocket
	// exec (a GET) is refused as an SPDY one (a POST, create) is.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "exec-get"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods", "pods/exec"}}}}
	if _, err := client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "exec-get"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "exec-get"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}
	if _, err := client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bob, err := s.AddUser("bob")
	if err != nil {
		t.Fatal(err)
	}
	bobClient := kubernetes.NewForConfigOrDie(bob)
	execURL := func() *url.URL {
		return bobClient.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name("web").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Command: []string{"ls"}, Stdout: true}, scheme.ParameterCodec).URL()
	}
	ws, err := remotecommand.NewWebSocketExecutor(bob, http.MethodGet, execURL().String())
	if err != nil {
		t.Fatal(err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(bob, http.MethodPost, execURL())
	if err != nil {
		t.Fatal(err)
	}
	forbidden := `pods "web" is forbidden: ` // RBAC gives no reason
	for _, tc := range []struct {
		name     string
		executor remotecommand.Executor
		want     string
	}{
		{"websocket", ws, "unable to upgrade streaming request: " + forbidden},
		{"spdy", spdy, "unable to upgrade connection: " + forbidden + `User "bob" cannot create resource "pods/exec" in API group "" in the namespace "` + ns + `"`},
	} {
		// client-go's WebSocket executor reads the refusal's body as far
		// as its handshake buffered it: the message may go on past want.
		err := tc.executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard})
		if err == nil || err.Error() != tc.want && (tc.name != "websocket" || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("bob's %s exec: got %v, want %q", tc.name, err, tc.want)
		}
	}
	if got := takeAsked(); len(got) != 0 {
		t.Errorf("bob's execs reached the kubelet: %q", got)
	}
}
