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
	"net"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/transport"
)

// KubeletConfig is how the server reaches kubelets: kube-apiserver's
// kubelet client config (its --kubelet-* flags).
type KubeletConfig struct {
	// Nodes reads the nodes, whose status says where their kubelets are.
	Nodes rest.Getter
	// CertFile and KeyFile are the client certificate the kubelets are
	// shown (--kubelet-client-certificate, --kubelet-client-key); none
	// without both.
	CertFile, KeyFile string
	// CAFile verifies the kubelets' serving certificates
	// (--kubelet-certificate-authority); without it they are not checked.
	CAFile string
	// PreferredAddressTypes are the node address types tried, in order
	// (--kubelet-preferred-address-types); default upstream's.
	PreferredAddressTypes []corev1.NodeAddressType
	// Port is the kubelet port of a node that reports none
	// (--kubelet-port); default 10250.
	Port int
}

// DefaultKubeletAddressTypes are kube-apiserver's default
// --kubelet-preferred-address-types.
var DefaultKubeletAddressTypes = []corev1.NodeAddressType{
	corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP,
}

// DefaultKubeletPort is kube-apiserver's default --kubelet-port.
const DefaultKubeletPort = 10250

// Kubelets finds a node's kubelet and carries requests to it, as
// upstream's NodeConnectionInfoGetter (k8s.io/kubernetes
// pkg/kubelet/client).
type Kubelets struct {
	nodes rest.Getter
	// transport checks the kubelets' certificates if given a CA; insecure
	// never does (pods/log's insecureSkipTLSVerifyBackend).
	transport, insecure http.RoundTripper
	types               []corev1.NodeAddressType
	port                int
}

// NewKubelets returns the kubelets of c's nodes, reached with a transport
// made as kube-apiserver makes its kubelet client's (client-go's, which
// reloads the certificate files as they change).
func NewKubelets(c KubeletConfig) (*Kubelets, error) {
	if c.Nodes == nil {
		return nil, errors.New("kubelets: no Nodes")
	}
	if c.PreferredAddressTypes == nil {
		c.PreferredAddressTypes = DefaultKubeletAddressTypes
	}
	if c.Port == 0 {
		c.Port = DefaultKubeletPort
	}
	rt, err := kubeletTransport(c, false)
	if err != nil {
		return nil, err
	}
	insecure, err := kubeletTransport(c, true)
	if err != nil {
		return nil, err
	}
	return &Kubelets{nodes: c.Nodes, transport: rt, insecure: insecure, types: c.PreferredAddressTypes, port: c.Port}, nil
}

// kubeletTransport is upstream's makeTransport: client-go's transport with
// c's files, which does not check the kubelets' certificates without a CA
// or if insecure.
func kubeletTransport(c KubeletConfig, insecure bool) (http.RoundTripper, error) {
	cfg := &transport.Config{TLS: transport.TLSConfig{CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile, ReloadTLSFiles: true}}
	if insecure {
		cfg.TLS.Insecure, cfg.TLS.CAFile = true, ""
	}
	if !cfg.HasCA() {
		cfg.TLS.Insecure = true
	}
	rt, err := transport.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubelet client: %w", err)
	}
	return rt, nil
}

// kubelet is where one node's kubelet is.
type kubelet struct {
	// host is its host:port.
	host string
	// features are those its node declares (status.declaredFeatures).
	features []string
}

// kubelet returns where node name's kubelet is: its first address of a
// preferred type, and the port it reports (or the default). Errors are
// upstream's: the node store's (named after the request's resource),
// then "no preferred addresses found".
func (k *Kubelets) kubelet(ctx context.Context, name string) (kubelet, error) {
	obj, err := k.nodes.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return kubelet{}, err
	}
	node := obj.(*corev1.Node)
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = k.port
	}
	for _, t := range k.types {
		for _, a := range node.Status.Addresses {
			if a.Type == t {
				return kubelet{host: net.JoinHostPort(a.Address, strconv.Itoa(port)), features: node.Status.DeclaredFeatures}, nil
			}
		}
	}
	return kubelet{}, fmt.Errorf("no preferred addresses found; known addresses: %v", node.Status.Addresses)
}
