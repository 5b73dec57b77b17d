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
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/filters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	translator "k8s.io/apiserver/pkg/util/proxy"
	proxymetrics "k8s.io/apiserver/pkg/util/proxy/metrics"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// Streams are what pods/exec, pods/attach and pods/portforward need, as
// upstream's ExecREST, AttachREST and PortForwardREST (k8s.io/kubernetes
// pkg/registry/core/pod/rest/subresources.go) with upstream's feature
// gates at their 1.37 defaults: each is proxied to the pod's kubelet; a
// WebSocket request (kubectl's first try) is translated to SPDY here
// unless the node declares ExtendWebSocketsToKubelet; and a WebSocket
// request, authorized as a get, must be allowed to create too
// (AuthorizePodWebsocketUpgradeCreatePermission).
type Streams struct {
	// Pods reads the pod.
	Pods rest.Getter
	// Kubelets finds the pod's kubelet and carries the streams to it.
	Kubelets *Kubelets
	// Authorizer decides the create check.
	Authorizer authorizer.UnconditionalAuthorizer
}

// Storage returns pods/exec, pods/attach and pods/portforward.
func (s Streams) Storage() map[string]rest.Storage {
	return map[string]rest.Storage{"pods/exec": &ExecREST{s}, "pods/attach": &AttachREST{s}, "pods/portforward": &PortForwardREST{s}}
}

// upgradeableMethods are upstream's: GET for WebSockets, POST for SPDY.
var upgradeableMethods = []string{"GET", "POST"}

// ExecREST is pods/exec: a command run in a container.
type ExecREST struct{ Streams }

// AttachREST is pods/attach: a container's running process's streams.
type AttachREST struct{ Streams }

// PortForwardREST is pods/portforward: connections to a pod's ports.
type PortForwardREST struct{ Streams }

var (
	_ rest.Connecter = (*ExecREST)(nil)
	_ rest.Connecter = (*AttachREST)(nil)
	_ rest.Connecter = (*PortForwardREST)(nil)
)

func (r *ExecREST) New() runtime.Object        { return &corev1.PodExecOptions{} }
func (r *AttachREST) New() runtime.Object      { return &corev1.PodAttachOptions{} }
func (r *PortForwardREST) New() runtime.Object { return &corev1.PodPortForwardOptions{} }

func (r *ExecREST) Destroy()        {} // the pods' and nodes' stores own their storage
func (r *AttachREST) Destroy()      {}
func (r *PortForwardREST) Destroy() {}

func (r *ExecREST) ConnectMethods() []string        { return upgradeableMethods }
func (r *AttachREST) ConnectMethods() []string      { return upgradeableMethods }
func (r *PortForwardREST) ConnectMethods() []string { return upgradeableMethods }

func (r *ExecREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.PodExecOptions{}, false, ""
}

func (r *AttachREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.PodAttachOptions{}, false, ""
}

func (r *PortForwardREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.PodPortForwardOptions{}, false, ""
}

// Connect returns the handler of an exec in pod name as opts says.
func (r *ExecREST) Connect(ctx context.Context, name string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	if err := ensureAuthorizedForVerb(ctx, r.Authorizer, "create"); err != nil {
		return nil, err
	}
	o, ok := opts.(*corev1.PodExecOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", opts)
	}
	loc, k, err := streamLocation(ctx, r.Pods, r.Kubelets, name, o.Container, "exec", streamQuery(o.Stdin, o.Stdout, o.Stderr, o.TTY, o.Command))
	if err != nil {
		return nil, err
	}
	return r.translated(ctx, "exec", loc, k, responder, translator.Options{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Tty: o.TTY}), nil
}

// Connect returns the handler of an attach to pod name as opts says.
func (r *AttachREST) Connect(ctx context.Context, name string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	if err := ensureAuthorizedForVerb(ctx, r.Authorizer, "create"); err != nil {
		return nil, err
	}
	o, ok := opts.(*corev1.PodAttachOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", opts)
	}
	loc, k, err := streamLocation(ctx, r.Pods, r.Kubelets, name, o.Container, "attach", streamQuery(o.Stdin, o.Stdout, o.Stderr, o.TTY, nil))
	if err != nil {
		return nil, err
	}
	return r.translated(ctx, "attach", loc, k, responder, translator.Options{Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Tty: o.TTY}), nil
}

// Connect returns the handler of a port forwarding to pod name as opts
// says.
func (r *PortForwardREST) Connect(ctx context.Context, name string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	if err := ensureAuthorizedForVerb(ctx, r.Authorizer, "create"); err != nil {
		return nil, err
	}
	o, ok := opts.(*corev1.PodPortForwardOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", opts)
	}
	loc, k, err := portForwardLocation(ctx, r.Pods, r.Kubelets, name, o.Ports)
	if err != nil {
		return nil, err
	}
	handler := r.proxy(loc, responder)
	if supportsWebSockets(k) {
		proxymetrics.IncWebSocketStreamingRequest(ctx, "portforward", "proxied_to_kubelet")
		return handler, nil
	}
	proxymetrics.IncWebSocketStreamingRequest(ctx, "portforward", "translated_at_apiserver")
	return translator.NewTranslatingHandler(handler, translator.NewTunnelingHandler(handler), wsstream.IsWebSocketRequestWithTunnelingProtocol), nil
}

// proxy is upstream's newThrottledUpgradeAwareProxyHandler: the upgrade
// (SPDY, or WebSocket) passed on to loc, with no bandwidth limit
// (kube-apiserver's without --max-connection-bytes-per-sec, which is
// refused here).
func (s Streams) proxy(loc *url.URL, responder rest.Responder) *proxy.UpgradeAwareHandler {
	return proxy.NewUpgradeAwareHandler(loc, s.Kubelets.transport, false, true, proxy.NewErrorResponder(responder))
}

// translated is the handler of exec or attach (subresource): the proxy,
// in front of which a WebSocket request of the v5 protocol is translated
// to SPDY, unless the kubelet takes WebSockets itself.
func (s Streams) translated(ctx context.Context, subresource string, loc *url.URL, k kubelet, responder rest.Responder, opts translator.Options) http.Handler {
	handler := s.proxy(loc, responder)
	if supportsWebSockets(k) {
		proxymetrics.IncWebSocketStreamingRequest(ctx, subresource, "proxied_to_kubelet")
		return handler
	}
	proxymetrics.IncWebSocketStreamingRequest(ctx, subresource, "translated_at_apiserver")
	streams := translator.NewStreamTranslatorHandler(loc, s.Kubelets.transport, 0, opts)
	return translator.NewTranslatingHandler(handler, streams, wsstream.IsWebSocketRequestWithStreamCloseProtocol)
}

// extendWebSocketsToKubelet is the node feature (upstream's gate of that
// name) of a kubelet that takes WebSocket streams itself.
const extendWebSocketsToKubelet = "ExtendWebSocketsToKubelet"

// supportsWebSockets is upstream's checkNodeSupportsWebsockets.
func supportsWebSockets(k kubelet) bool {
	return slices.Contains(k.features, extendWebSocketsToKubelet)
}

// ensureAuthorizedForVerb is upstream's (authorize.go): a request that was
// authorized as another verb (a WebSocket GET: get) is authorized as verb
// too, so that policies that allow exec only with create keep their
// meaning (https://issues.k8s.io/133515).
func ensureAuthorizedForVerb(ctx context.Context, a authorizer.UnconditionalAuthorizer, verb string) error {
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	if !ok {
		return apierrors.NewInternalError(errors.New("no request info in context"))
	}
	if info.Verb == verb {
		return nil // already authorized
	}
	if a == nil {
		return apierrors.NewInternalError(errors.New("no authorizer available"))
	}
	attrs, err := filters.GetAuthorizerAttributes(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("error building authorizer attributes: %w", err))
	}
	decision, reason, err := a.Authorize(ctx, overrideVerb{Attributes: attrs, verb: verb})
	if err != nil {
		return err
	}
	if decision != authorizer.DecisionAllow {
		return apierrors.NewForbidden(schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}, info.Name, errors.New(reason))
	}
	return nil
}

// overrideVerb are a request's attributes with another verb.
type overrideVerb struct {
	authorizer.Attributes
	verb string
}

func (o overrideVerb) GetVerb() string { return o.verb }
