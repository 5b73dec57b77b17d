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
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/registry/rest"
	netutils "k8s.io/utils/net"
)

// ProxyREST is pods/proxy: a request carried to a port of a pod's IP, as
// upstream's ProxyREST and ResourceLocation (k8s.io/kubernetes
// pkg/registry/core/pod/rest/subresources.go and strategy.go).
type ProxyREST struct {
	// Pods reads the pod.
	Pods rest.Getter
	// Transport carries the requests: kube-apiserver's proxy transport
	// (NewProxyTransport).
	Transport http.RoundTripper
}

var _ rest.Connecter = (*ProxyREST)(nil)

func (r *ProxyREST) New() runtime.Object      { return &corev1.PodProxyOptions{} }
func (r *ProxyREST) Destroy()                 {} // the pods' store owns its storage
func (r *ProxyREST) ConnectMethods() []string { return ProxyMethods }

func (r *ProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.PodProxyOptions{}, true, "path"
}

// Connect proxies to the location of id ("[scheme:]name[:port]") the
// options' path, upgrades allowed.
func (r *ProxyREST) Connect(ctx context.Context, id string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	o, ok := opts.(*corev1.PodProxyOptions)
	if !ok {
		return nil, fmt.Errorf("Invalid options object: %#v", opts) //nolint:staticcheck // upstream's message
	}
	location, err := proxyLocation(ctx, r.Pods, id)
	if err != nil {
		return nil, err
	}
	return ProxyHandler(location, o.Path, r.Transport, responder), nil
}

// proxyLocation is where id ("podname", "podname:port" or
// "scheme:podname:port") is, as upstream's ResourceLocation: the pod's
// first IP at the port named, else at its first container port declared
// (the first container that declares one), else at none (the scheme's);
// upstream's 400 for an id that does not parse, and its 400 "address not
// allowed" for a pod with no IP or one that is not global unicast
// (loopback, link-local, unspecified, multicast).
func proxyLocation(ctx context.Context, pods rest.Getter, id string) (*url.URL, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", id))
	}
	pod, err := getPod(ctx, pods, name)
	if err != nil {
		return nil, err
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = fmt.Sprintf("%d", c.Ports[0].ContainerPort)
				break
			}
		}
	}
	addr := podIP(pod)
	if ip := netutils.ParseIPSloppy(addr); ip == nil || !ip.IsGlobalUnicast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	loc := &url.URL{Scheme: scheme}
	switch {
	case port != "":
		loc.Host = net.JoinHostPort(addr, port)
	case strings.Contains(addr, ":"): // an IPv6 host is bracketed
		loc.Host = "[" + addr + "]"
	default:
		loc.Host = addr
	}
	return loc, nil
}

// podIP is pod's primary IP, as upstream's getPodIP: the first of its
// podIPs (which the API keeps in step with podIP), or "".
func podIP(pod *corev1.Pod) string {
	if len(pod.Status.PodIPs) > 0 {
		return pod.Status.PodIPs[0].IP
	}
	return pod.Status.PodIP
}
