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
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apiserver/pkg/util/webhook"
)

// ServiceAddresses maps the Services that webhooks (admission and CRD
// conversion) refer to onto local addresses, since there is no Service
// network here: "namespace/name:port" to "host:port".
type ServiceAddresses map[string]string

var _ webhook.ServiceResolver = ServiceAddresses(nil)

// ParseServiceAddresses checks m's keys and values.
func ParseServiceAddresses(m map[string]string) (ServiceAddresses, error) {
	for k, v := range m {
		if _, _, _, err := splitServiceKey(k); err != nil {
			return nil, err
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			return nil, fmt.Errorf("webhook service %s: address %q is not host:port", k, v)
		}
	}
	return ServiceAddresses(m), nil
}

// ServiceKey is the key of a Service's port in ServiceAddresses.
func ServiceKey(namespace, name string, port int32) string {
	return namespace + "/" + name + ":" + strconv.Itoa(int(port))
}

func splitServiceKey(k string) (namespace, name string, port int32, err error) {
	ns, rest, ok := strings.Cut(k, "/")
	name, p, ok2 := strings.Cut(rest, ":")
	n, perr := strconv.ParseInt(p, 10, 32)
	if !ok || !ok2 || ns == "" || name == "" || perr != nil || n < 1 || n > 65535 {
		return "", "", 0, fmt.Errorf("webhook service %q is not namespace/name:port", k)
	}
	return ns, name, int32(n), nil
}

// ResolveEndpoint is a webhook.ServiceResolver: the webhook client calls
// https://<address><path>, checking the serving certificate against the
// Service's DNS name (name.namespace.svc), as kube-apiserver does.
func (s ServiceAddresses) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	key := ServiceKey(namespace, name, port)
	addr, ok := s[key]
	if !ok {
		return nil, fmt.Errorf("service %s has no address here (there is no Service network): map it to a local host:port with --webhook-service %s=HOST:PORT or testserver.WithWebhookService", key, key)
	}
	return &url.URL{Scheme: "https", Host: addr}, nil
}
