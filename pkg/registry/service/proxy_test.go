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
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// proxyFixture is services/proxy over stores of services, endpointslices
// and pods, each on its MemStorage, holding upstream's
// TestServiceRegistryResourceLocation's objects and some more.
func proxyFixture(t *testing.T) *ProxyREST {
	t.Helper()
	store := func(newStorage registrytest.NewStorageFunc, resource string) (*registrytest.MemStorage, *registry.REST) {
		mem := registrytest.NewMemStorage()
		storages, err := newStorage(mem.Options(resource))
		if err != nil {
			t.Fatal(err)
		}
		return mem, storages[resource].(*registry.REST)
	}
	svcMem, services := store(NewStorage, "services")
	sliceMem, slices := store(endpointslice.NewStorage, "endpointslices")
	podMem, pods := store(pod.NewStorage, "pods")

	newPod := func(name string, ips ...string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		for _, ip := range ips {
			p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
		}
		p.Status.PodIP = ips[0]
		registrytest.SeedObject(t, podMem, pods, p)
	}
	newPod("unnamed", "1.2.3.4", "1.2.3.5")
	newPod("named", "1.2.3.6", "1.2.3.7")
	newPod("no-endpoints", "9.9.9.9") // to prove it is not chosen
	newPod("mixed", "1.2.3.9")

	newService := func(name string, ports ...corev1.ServicePort) {
		registrytest.SeedObject(t, svcMem, services, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.ServiceSpec{Ports: ports},
		})
	}
	unnamedPort := corev1.ServicePort{Port: 93, Protocol: corev1.ProtocolTCP}
	for _, name := range []string{"unnamed", "unnamed2", "no-endpoints", "not-ready", "untargeted", "stale", "elsewhere", "mixed"} {
		newService(name, unnamedPort)
	}
	newService("named", corev1.ServicePort{Name: "p", Port: 93}, corev1.ServicePort{Name: "q", Port: 76})

	target := func(name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Name: name, Namespace: "default"}
	}
	endpoint := func(addr string, ref *corev1.ObjectReference) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{addr}, TargetRef: ref}
	}
	unnamed := []discoveryv1.EndpointPort{{Name: ptr.To(""), Port: ptr.To[int32](80)}}
	newSlice := func(name, service string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) {
		registrytest.SeedObject(t, sliceMem, slices, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: service}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   eps,
			Ports:       ports,
		})
	}
	newSlice("unnamed-ep", "unnamed", unnamed, endpoint("1.2.3.4", target("unnamed")))
	newSlice("unnamed2-ep", "unnamed2", unnamed, endpoint("1.2.3.5", target("unnamed")))
	newSlice("named-ep", "named", []discoveryv1.EndpointPort{{Name: ptr.To("p"), Port: ptr.To[int32](80)}, {Name: ptr.To("q"), Port: ptr.To[int32](81)}},
		endpoint("1.2.3.6", target("named")))
	newSlice("no-endpoints-ep", "no-endpoints", unnamed)
	notReady := endpoint("1.2.3.4", target("unnamed"))
	notReady.Conditions.Ready = ptr.To(false)
	newSlice("not-ready-ep", "not-ready", unnamed, notReady)
	newSlice("untargeted-ep", "untargeted", unnamed, endpoint("1.2.3.4", nil))
	newSlice("stale-ep", "stale", unnamed, endpoint("1.2.3.8", target("unnamed")))
	newSlice("elsewhere-ep", "elsewhere", unnamed, endpoint("1.2.3.4", &corev1.ObjectReference{Name: "unnamed", Namespace: "other"}))
	// Of mixed's endpoints only the last will do, wherever the choice
	// starts.
	newSlice("mixed-ep", "mixed", unnamed, notReady, endpoint("1.2.3.9", nil), endpoint("1.2.3.4", target("mixed")), endpoint("1.2.3.9", target("mixed")))
	return &ProxyREST{Services: services, EndpointSlices: slices, Pods: pods, Transport: http.DefaultTransport}
}

// TestProxyLocation: a service's id is located as upstream's
// ResourceLocation locates it (its test's cases first): at a ready
// endpoint, of a pod with its address, of an EndpointSlice of the Service
// with the port named, or the port numbered's name; with upstream's
// errors and messages otherwise.
func TestProxyLocation(t *testing.T) {
	r := proxyFixture(t)
	ctx := nsContext
	unavailable := func(msg string) func(error) (bool, string) {
		return func(err error) (bool, string) { return apierrors.IsServiceUnavailable(err), msg }
	}
	noEndpoints := func(svc string) func(error) (bool, string) {
		return unavailable(`no endpoints available for service "` + svc + `"`)
	}
	for _, tc := range []struct {
		id      string
		want    string
		wantErr func(error) (bool, string)
	}{
		{id: "unnamed", want: "//1.2.3.4:80"},
		{id: "unnamed:", want: "//1.2.3.4:80"},
		{id: "unnamed:93", want: "//1.2.3.4:80"},
		{id: "http:unnamed:", want: "http://1.2.3.4:80"},
		{id: "http:unnamed:93", want: "http://1.2.3.4:80"},
		{id: "unnamed:80", wantErr: unavailable(`no service port 80 found for service "unnamed"`)},
		{id: "unnamed2", want: "//1.2.3.5:80"},
		{id: "named:p", want: "//1.2.3.6:80"},
		{id: "named:q", want: "//1.2.3.6:81"},
		{id: "named:93", want: "//1.2.3.6:80"},
		{id: "named:76", want: "//1.2.3.6:81"},
		{id: "http:named:p", want: "http://1.2.3.6:80"},
		{id: "https:named:q", want: "https://1.2.3.6:81"},
		{id: "named:bad", wantErr: noEndpoints("named")},
		{id: "named", wantErr: noEndpoints("named")}, // no port named ""
		{id: "no-endpoints", wantErr: noEndpoints("no-endpoints")},
		{id: "non-existent", wantErr: noEndpoints("non-existent")}, // a port name: the Service is not read
		{id: "non-existent:80", wantErr: func(err error) (bool, string) {
			return apierrors.IsNotFound(err), `services "non-existent" not found`
		}},
		{id: "not-ready", wantErr: noEndpoints("not-ready")},
		{id: "untargeted", wantErr: noEndpoints("untargeted")},
		{id: "stale", wantErr: noEndpoints("stale")},
		{id: "elsewhere", wantErr: noEndpoints("elsewhere")},
		{id: "mixed", want: "//1.2.3.9:80"},
		{id: "a:b:c:d", wantErr: func(err error) (bool, string) {
			return apierrors.IsBadRequest(err), `invalid service request "a:b:c:d"`
		}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			// The endpoint is chosen at random: ask often enough to see
			// another one if another were chosen.
			for range 20 {
				loc, err := r.location(ctx, tc.id)
				if tc.wantErr != nil {
					if ok, msg := tc.wantErr(err); !ok || err.Error() != msg {
						t.Fatalf("got %v, %v; want upstream's %q", loc, err, msg)
					}
					continue
				}
				if err != nil || loc.String() != tc.want {
					t.Fatalf("got %v, %v; want %s", loc, err, tc.want)
				}
			}
		})
	}
	if _, err := r.location(context.Background(), "unnamed"); !apierrors.IsBadRequest(err) || err.Error() != "missing required namespace" {
		t.Errorf("with no namespace: got %v, want upstream's 400", err)
	}
}

// TestProxyConnect: the handler proxies to the location the options'
// path, a trailing slash kept (the handler makes no scheme http), through
// the proxy transport, upgrades allowed.
func TestProxyConnect(t *testing.T) {
	r := proxyFixture(t)
	ctx := nsContext
	for path, want := range map[string]string{"": "http://1.2.3.6:81", "/a/b/": "http://1.2.3.6:81/a/b/", "/metrics": "http://1.2.3.6:81/metrics"} {
		h, err := r.Connect(ctx, "named:q", &corev1.ServiceProxyOptions{Path: path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		u, ok := h.(*proxy.UpgradeAwareHandler)
		if !ok || u.Location.String() != want || u.Transport != r.Transport || u.UpgradeRequired || !u.WrapTransport {
			t.Errorf("path %q: got %#v to %v, want an upgrade-aware handler to %s", path, h, u.Location, want)
		}
	}
	if _, err := r.Connect(ctx, "named", &corev1.ServiceProxyOptions{}, nil); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("a service with no endpoint: got %v, want upstream's 503", err)
	}
	if _, err := r.Connect(ctx, "named:q", &corev1.PodProxyOptions{}, nil); err == nil {
		t.Errorf("other options: got no error")
	}
}
