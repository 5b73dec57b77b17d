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
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/proxy"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// proxyFixture is pods/proxy over pods of the IPs and container ports
// named.
func proxyFixture(t *testing.T) *ProxyREST {
	t.Helper()
	p := newPods(t)
	pod := func(name, ip string, ports ...[]int32) {
		p.seed(t, modified(validPod(), func(pod *corev1.Pod) {
			pod.Name = name
			pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 1}}}}
			pod.Spec.Containers = nil
			for i, ps := range ports {
				c := corev1.Container{Name: string(rune('a' + i)), Image: "nginx"}
				for _, port := range ps {
					c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: port})
				}
				pod.Spec.Containers = append(pod.Spec.Containers, c)
			}
			if ip != "" {
				pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
			}
		}))
	}
	pod("web", "192.0.2.7", nil, []int32{8080, 8443}, []int32{9090})
	pod("bare", "192.0.2.8", nil)
	pod("v6", "2001:db8::1")
	pod("v6port", "2001:db8::2", []int32{80})
	pod("pending", "", []int32{80})
	pod("loopback", "127.0.0.1", []int32{80})
	pod("linklocal", "169.254.1.1", []int32{80})
	pod("unspecified", "0.0.0.0", []int32{80})
	pod("v6loopback", "::1", []int32{80})
	return &ProxyREST{Pods: p.store, Transport: NewProxyTransport()}
}

// TestPodProxyLocation: a pod's id is located as upstream's
// ResourceLocation locates it: the pod's IP at the port named, or its
// first container's first port declared, or no port; upstream's 400
// "address not allowed" for a pod with no IP or an IP not global unicast,
// its 400 for an id that does not parse, and the store's 404.
func TestPodProxyLocation(t *testing.T) {
	r := proxyFixture(t)
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	notAllowed := func(err error) (bool, string) { return apierrors.IsBadRequest(err), "address not allowed" }
	for _, tc := range []struct {
		id      string
		want    string
		wantErr func(error) (bool, string)
	}{
		{id: "web", want: "//192.0.2.7:8080"},
		{id: "web:", want: "//192.0.2.7:8080"},
		{id: "web:9090", want: "//192.0.2.7:9090"},
		{id: "web:anything", want: "//192.0.2.7:anything"}, // as upstream: the port is not checked
		{id: "http:web:", want: "http://192.0.2.7:8080"},
		{id: "https:web:8443", want: "https://192.0.2.7:8443"},
		{id: "bare", want: "//192.0.2.8"},
		{id: "https:bare:", want: "https://192.0.2.8"},
		{id: "v6", want: "//[2001:db8::1]"},
		{id: "v6:80", want: "//[2001:db8::1]:80"},
		{id: "v6port", want: "//[2001:db8::2]:80"},
		{id: "pending", wantErr: notAllowed},
		{id: "loopback", wantErr: notAllowed},
		{id: "loopback:80", wantErr: notAllowed},
		{id: "linklocal", wantErr: notAllowed},
		{id: "unspecified", wantErr: notAllowed},
		{id: "v6loopback", wantErr: notAllowed},
		{id: "ghost", wantErr: func(err error) (bool, string) { return apierrors.IsNotFound(err), `pods "ghost" not found` }},
		{id: "a:b:c:d", wantErr: func(err error) (bool, string) {
			return apierrors.IsBadRequest(err), `invalid pod request "a:b:c:d"`
		}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			loc, err := proxyLocation(ctx, r.Pods, tc.id)
			if tc.wantErr != nil {
				if ok, msg := tc.wantErr(err); !ok || err.Error() != msg {
					t.Errorf("got %v, %v; want upstream's %q", loc, err, msg)
				}
				return
			}
			if err != nil || loc.String() != tc.want {
				t.Errorf("got %v, %v; want %s", loc, err, tc.want)
			}
		})
	}
}

// TestPodProxyConnect: the handler proxies to the location the options'
// path, a trailing slash kept (the handler makes no scheme http), through
// the proxy transport, upgrades allowed; an error locating it is
// Connect's.
func TestPodProxyConnect(t *testing.T) {
	r := proxyFixture(t)
	var _ rest.Connecter = r
	ctx := genericapirequest.WithNamespace(context.Background(), "default")
	for path, want := range map[string]string{"": "http://192.0.2.7:9090", "/a/b/": "http://192.0.2.7:9090/a/b/", "/metrics": "http://192.0.2.7:9090/metrics"} {
		h, err := r.Connect(ctx, "web:9090", &corev1.PodProxyOptions{Path: path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		u, ok := h.(*proxy.UpgradeAwareHandler)
		if !ok || u.Location.String() != want || u.Transport != r.Transport || u.UpgradeRequired || !u.WrapTransport {
			t.Errorf("path %q: got %#v to %v, want an upgrade-aware handler to %s", path, h, u.Location, want)
		}
	}
	if _, err := r.Connect(ctx, "pending", &corev1.PodProxyOptions{}, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("a pod with no IP: got %v, want upstream's 400", err)
	}
	if _, err := r.Connect(ctx, "web", &corev1.NodeProxyOptions{}, nil); err == nil {
		t.Errorf("other options: got no error")
	}
}
