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

package service

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	endpointproxy "k8s.io/apiserver/pkg/util/proxy"

	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

// ProxyREST is services/proxy: a request carried to a ready endpoint of a
// Service, as upstream's ProxyREST and ResourceLocation (k8s.io/kubernetes
// pkg/registry/core/service/proxy.go and storage/storage.go), which read
// the Service's EndpointSlices (kube-apiserver 1.37 reads no Endpoints).
type ProxyREST struct {
	// Services reads the Service whose port a number names.
	Services rest.Getter
	// EndpointSlices lists the Service's EndpointSlices (those labelled
	// kubernetes.io/service-name with its name).
	EndpointSlices rest.Lister
	// Pods reads the pod an endpoint targets: only an endpoint whose pod
	// has its address is proxied to.
	Pods rest.Getter
	// Transport carries the requests: kube-apiserver's proxy transport.
	Transport http.RoundTripper
}

var _ rest.Connecter = (*ProxyREST)(nil)

func (r *ProxyREST) New() runtime.Object      { return &corev1.ServiceProxyOptions{} }
func (r *ProxyREST) Destroy()                 {} // the stores own their storage
func (r *ProxyREST) ConnectMethods() []string { return pod.ProxyMethods }

func (r *ProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.ServiceProxyOptions{}, true, "path"
}

// Connect proxies to the location of id ("[scheme:]name[:port]") the
// options' path, upgrades allowed.
func (r *ProxyREST) Connect(ctx context.Context, id string, opts runtime.Object, responder rest.Responder) (http.Handler, error) {
	o, ok := opts.(*corev1.ServiceProxyOptions)
	if !ok {
		return nil, fmt.Errorf("Invalid options object: %#v", opts) //nolint:staticcheck // upstream's message
	}
	location, err := r.location(ctx, id)
	if err != nil {
		return nil, err
	}
	return pod.ProxyHandler(location, o.Path, r.Transport, responder), nil
}

// location is where id ("svcname", "svcname:port" or
// "scheme:svcname:port", the port a name or a number) is, as upstream's
// ResourceLocation: a random ready endpoint, of a pod with its address, of
// the Service's EndpointSlices that have the port (by name: a number is
// the Service's port of that number, whose name is looked up), at the
// slice's port number; upstream's errors otherwise: 400 for an id that
// does not parse, 503 "no service port N found for service" for a number
// that is no port of the Service, and 503 "no endpoints available for
// service" when no endpoint will do.
func (r *ProxyREST) location(ctx context.Context, id string) (*url.URL, error) {
	scheme, name, port, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	// A port number is the Service's port of that number, by its name.
	if number, err := strconv.ParseInt(port, 10, 64); err == nil {
		obj, err := r.Services.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		svc, ok := obj.(*corev1.Service)
		if !ok {
			return nil, fmt.Errorf("unexpected object type: %#v", obj)
		}
		found := false
		for _, p := range svc.Spec.Ports {
			if int64(p.Port) == number {
				port, found = p.Name, true
				break
			}
		}
		if !found {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", number, name))
		}
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	if namespace == "" {
		return nil, apierrors.NewBadRequest("missing required namespace")
	}
	slices, err := r.endpointSlices(ctx, name)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(slices) == 0 {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	// Cluster IPs are IPv4 only (Ranges): IPv4 is the primary family.
	hostPort, err := endpointproxy.RandomEndpoint(name, slices, port, corev1.IPv4Protocol, func(ep *discoveryv1.Endpoint) bool {
		if err := r.validAddress(ctx, ep); err != nil {
			// Upstream logs through klog's global logger; this, through the
			// request's (the line is the same).
			utilruntime.HandleErrorWithContext(ctx, fmt.Errorf("endpoint %v isn't valid (%w)", ep, err), "Unhandled Error")
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, nil
}

// endpointSlices are the EndpointSlices, in ctx's namespace, of the
// Service name: those labelled kubernetes.io/service-name name, as
// upstream's EndpointSliceGetter finds them.
func (r *ProxyREST) endpointSlices(ctx context.Context, name string) ([]*discoveryv1.EndpointSlice, error) {
	selector := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name})
	obj, err := r.EndpointSlices.List(ctx, &metainternalversion.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*discoveryv1.EndpointSliceList)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %#v", obj)
	}
	slices := make([]*discoveryv1.EndpointSlice, 0, len(list.Items))
	for i := range list.Items {
		// The storage selects them; checked again, as cheap as it is.
		if selector.Matches(labels.Set(list.Items[i].Labels)) {
			slices = append(slices, &list.Items[i])
		}
	}
	return slices, nil
}

// validAddress is upstream's isValidAddress: only an endpoint that targets
// a pod, in the request's namespace, one of whose IPs is the endpoint's
// (first) address is proxied to.
func (r *ProxyREST) validAddress(ctx context.Context, ep *discoveryv1.Endpoint) error {
	if ep.TargetRef == nil {
		return fmt.Errorf("endpoint has no target ref, skipping: %v", ep)
	}
	if genericapirequest.NamespaceValue(ctx) != ep.TargetRef.Namespace {
		return fmt.Errorf("endpoint namespace doesn't match context namespace")
	}
	obj, err := r.Pods.Get(ctx, ep.TargetRef.Name, &metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("failed to cast to pod: %v", obj)
	}
	for _, podIP := range pod.Status.PodIPs {
		if podIP.IP == ep.Addresses[0] {
			return nil
		}
	}
	return fmt.Errorf("pod ip(s) doesn't match endpoint ip, skipping: %v vs %s (%s/%s)", pod.Status.PodIPs, ep.Addresses[0], ep.TargetRef.Namespace, ep.TargetRef.Name)
}
