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
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestPodLogs: pods/log answers as kube-apiserver's: the log streamed from
// the kubelet endpoint the pod's node reports (here a stand-in kubelet),
// with the options passed on; an empty log for a pod on no node; upstream's
// 400s for a container not named or not there, 422 for bad options, a
// 404 for a node that is not there.
func TestPodLogs(t *testing.T) {
	t.Parallel()
	s, client := framework.Start(t)
	ctx := t.Context()
	ns := framework.CreateNamespace(t, client)
	var mu sync.Mutex
	var asked []string
	kubelet := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.RequestURI())
		mu.Unlock()
		w.Write([]byte("line 1\nline 2\n"))
	}))
	defer kubelet.Close()
	_, port, _ := net.SplitHostPort(kubelet.Listener.Addr().String())
	kubeletPort, _ := strconv.Atoi(port)

	node, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "192.0.2.1"}, {Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(kubeletPort)
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := client.CoreV1().Pods(ns)
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "two"}, Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "setup", Image: "busybox"}},
			Containers: []corev1.Container{{Name: "a", Image: "nginx"}, {Name: "b", Image: "nginx"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "lost"}, Spec: corev1.PodSpec{NodeName: "ghost", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
	} {
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	if out := framework.Kubectl(t, s, "", "logs", "-n", ns, "web", "--tail=1", "--timestamps"); out != "line 1\nline 2\n" {
		t.Errorf("kubectl logs web: %q, want the kubelet's answer", out)
	}
	mu.Lock()
	if want := "/containerLogs/" + ns + "/web/app?tailLines=1&timestamps=true"; len(asked) != 1 || asked[0] != want {
		t.Errorf("the kubelet was asked %v, want [%s]", asked, want)
	}
	mu.Unlock()
	if out := framework.Kubectl(t, s, "", "logs", "-n", ns, "pending"); out != "" {
		t.Errorf("kubectl logs of a pod on no node: %q, want nothing", out)
	}
	for _, tc := range []struct {
		pod, container, want string
	}{
		{"two", "", "a container name must be specified for pod two, choose one of: [setup a b]"},
		{"web", "nope", "container nope is not valid for pod web"},
	} {
		err := pods.GetLogs(tc.pod, &corev1.PodLogOptions{Container: tc.container}).Do(ctx).Error()
		if !apierrors.IsBadRequest(err) || err.Error() != tc.want {
			t.Errorf("logs of %s, container %q: %v, want 400 %q", tc.pod, tc.container, err, tc.want)
		}
	}
	if err := pods.GetLogs("web", &corev1.PodLogOptions{TailLines: ptr.To[int64](-1)}).Do(ctx).Error(); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "tailLines: Invalid value: -1: must be greater than or equal to 0") {
		t.Errorf("logs with tailLines -1: %v, want 422 naming tailLines", err)
	}
	// Upstream reads the node with the request's context, whose resource
	// names the error: pods, not nodes.
	if err := pods.GetLogs("lost", &corev1.PodLogOptions{}).Do(ctx).Error(); !apierrors.IsNotFound(err) || err.Error() != `pods "ghost" not found` {
		t.Errorf("logs of a pod on a node that is not there: %v, want upstream's 404", err)
	}
}
