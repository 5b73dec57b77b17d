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

package admissionchain

import (
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"
)

// openAPIAfter is client, whose OpenAPI v3 discovery answers once ready
// closes (the server is ready and its OpenAPI built), or done does. The
// MutatingAdmissionPolicy plugin's type converter reads /openapi/v3 every
// 5s from the start; that read computes every group's hash (marshals its
// spec), which would take the CPU from the start, and, as a request, hold
// up a stop. Built first, it costs a request nothing.
func openAPIAfter(client kubernetes.Interface, ready, done <-chan struct{}) kubernetes.Interface {
	return gatedClient{Interface: client, gate: gate{ready: ready, done: done}}
}

// gate opens when ready closes, unless done closes first.
type gate struct{ ready, done <-chan struct{} }

// wait reports whether the gate opened (false: done closed first).
func (g gate) wait() bool {
	select {
	case <-g.ready:
		return true
	case <-g.done:
		return false
	}
}

// gatedClient is a client whose discovery is gatedDiscovery.
type gatedClient struct {
	kubernetes.Interface
	gate gate
}

func (c gatedClient) Discovery() discovery.DiscoveryInterfaces {
	return gatedDiscovery{DiscoveryInterfaces: c.Interface.Discovery(), gate: c.gate}
}

// gatedDiscovery is a discovery client whose OpenAPI v3 client is gatedOpenAPI.
type gatedDiscovery struct {
	discovery.DiscoveryInterfaces
	gate gate
}

func (d gatedDiscovery) OpenAPIV3() openapi.Client {
	return gatedOpenAPI{Client: d.DiscoveryInterfaces.OpenAPIV3(), gate: d.gate}
}

// gatedOpenAPI is an OpenAPI v3 client whose Paths waits for the gate.
type gatedOpenAPI struct {
	openapi.Client
	gate gate
}

func (c gatedOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	if !c.gate.wait() {
		return map[string]openapi.GroupVersion{}, nil // stopping: nothing to log
	}
	return c.Client.Paths()
}
