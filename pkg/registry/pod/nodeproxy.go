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
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/registry/rest"
)

// NodeProxyREST is nodes/proxy: a request carried to a node's kubelet, or
// to another port of the node, as upstream's ProxyREST and
// ResourceLocation (k8s.io/kubernetes pkg/registry/core/node).
type NodeProxyREST struct {
	Kubelets *Kubelets
	// transport carries requests to ports other than the kubelet's, as
	// kube-apiserver's proxy transport: TLS unchecked, no client certificate.
	transport http.RoundTripper
}

// NewNodeProxyREST returns nodes/proxy through kubelets.
func NewNodeProxyREST(kubelets *Kubelets) *NodeProxyREST {
	return &NodeProxyREST{Kubelets: kubelets, transport: NewProxyTransport()}
}

// NewProxyTransport returns kube-apiserver's proxy transport, which
// nodes/proxy (to a port other than the kubelet's), pods/proxy and
// services/proxy carry requests with: TLS unchecked, no client
// certificate.
func NewProxyTransport() http.RoundTripper {
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // upstream's proxy transport checks no certificate
	})
}

var _ rest.Connecter = (*NodeProxyREST)(nil)

// ProxyMethods are the methods nodes/proxy, pods/proxy and services/proxy
// carry, upstream's.
var ProxyMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// ProxyHandler carries a request to path under location with transport,
// upgrades allowed, as upstream's proxy subresources do.
func ProxyHandler(location *url.URL, path string, transport http.RoundTripper, responder rest.Responder) http.Handler {
	location.Path = utilnet.JoinPreservingTrailingSlash(location.Path, path)
	return proxy.NewUpgradeAwareHandler(location, transport, true, false, proxy.NewErrorResponder(responder))
}

func (r *NodeProxyREST) New() runtime.Object      { return &corev1.NodeProxyOptions{} }
func (r *NodeProxyREST) Destroy()                 {} // the nodes' store owns its storage
func (r *NodeProxyREST) ConnectMethods() []string { return ProxyMethods }

func (r *NodeProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.NodeProxyOptions{}, true, "path"
}

// Connect proxies to the location of id ("[scheme:]name[:port]") the
// options' path, upgrades allowed.
func (r *NodeProxyREST) Connect(ctx context.Context, id string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	o, ok := opts.(*corev1.NodeProxyOptions)
	if !ok {
		return nil, fmt.Errorf("Invalid options object: %#v", opts) //nolint:staticcheck // upstream's message
	}
	location, transport, err := r.location(ctx, id)
	if err != nil {
		return nil, err
	}
	return ProxyHandler(location, o.Path, transport, responder), nil
}

// location is where id is: the node's kubelet (its transport) unless id
// names another port (the proxy transport); upstream's 400 for an id that
// does not parse or a node address that may not be proxied to.
func (r *NodeProxyREST) location(ctx context.Context, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", id))
	}
	k, err := r.Kubelets.kubelet(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	host, kubeletPort, err := net.SplitHostPort(k.host)
	if err != nil {
		return nil, nil, err
	}
	if err := proxyable(ctx, host); err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if port == "" || port == kubeletPort {
		return &url.URL{Scheme: "https", Host: k.host}, r.Kubelets.transport, nil
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}, r.transport, nil
}

// proxyable refuses a host any of whose addresses is not global unicast
// (loopback, link-local, unspecified, multicast), as upstream's
// isProxyableHostname.
func proxyable(ctx context.Context, host string) error {
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("no addresses for hostname")
	}
	for _, a := range addrs {
		if !a.IP.IsGlobalUnicast() {
			return fmt.Errorf("address not allowed")
		}
	}
	return nil
}
