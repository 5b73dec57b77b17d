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

package kubeapiserver

import (
	"time"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// miscOptions are kube-apiserver's "misc" flags (cmd/kube-apiserver's
// Extra and the control plane's own).
type miscOptions struct {
	AllowPrivileged           bool
	EndpointReconcilerType    string
	KubernetesServiceNodePort int
	ServiceClusterIPRanges    string
	ServiceNodePortRange      utilnet.PortRange
	KubeletPreferredAddresses []string
	KubeletPort               uint
	KubeletReadOnlyPort       uint
	KubeletTimeout            time.Duration
	KubeletClientCertificate  string
	KubeletClientKey          string
	KubeletCA                 string
	MasterCount               int

	EventTTL                            time.Duration
	EnableLogsHandler                   bool
	MaxConnectionBytesPerSec            int64
	ProxyClientCertFile                 string
	ProxyClientKeyFile                  string
	PeerCAFile                          string
	PeerAdvertiseIP, PeerAdvertisePort  string
	EnableAggregatorRouting             bool
	AggregatorRejectForwardingRedirects bool
	ServiceAccountSigningKeyFile        string
	ServiceAccountSigningEndpoint       string
	CoordinatedLeadershipLeaseDuration  time.Duration
	CoordinatedLeadershipRenewDeadline  time.Duration
	CoordinatedLeadershipRetryPeriod    time.Duration
}

func newMiscOptions() *miscOptions {
	return &miscOptions{
		EndpointReconcilerType:              "lease",
		ServiceNodePortRange:                utilnet.PortRange{Base: 30000, Size: 2768},
		KubeletPreferredAddresses:           []string{"Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"},
		KubeletPort:                         10250,
		KubeletReadOnlyPort:                 10255,
		KubeletTimeout:                      5 * time.Second,
		MasterCount:                         1,
		EventTTL:                            time.Hour,
		AggregatorRejectForwardingRedirects: true,
		CoordinatedLeadershipLeaseDuration:  15 * time.Second,
		CoordinatedLeadershipRenewDeadline:  10 * time.Second,
		CoordinatedLeadershipRetryPeriod:    2 * time.Second,
	}
}

// AddFlags adds kube-apiserver's misc flags, with its help.
func (o *miscOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "Amount of time to retain events.")
	fs.BoolVar(&o.EnableLogsHandler, "enable-logs-handler", o.EnableLogsHandler, "If true, install a /logs handler for the apiserver logs.")
	fs.Int64Var(&o.MaxConnectionBytesPerSec, "max-connection-bytes-per-sec", o.MaxConnectionBytesPerSec, "If non-zero, throttle each user connection to this number of bytes/sec. "+
		"Currently only applies to long-running requests.")
	fs.StringVar(&o.ProxyClientCertFile, "proxy-client-cert-file", o.ProxyClientCertFile, "Client certificate used to prove the identity of the aggregator or kube-apiserver "+
		"when it must call out during a request. This includes proxying requests to a user api-server and calling out to webhook admission plugins.")
	fs.StringVar(&o.ProxyClientKeyFile, "proxy-client-key-file", o.ProxyClientKeyFile, "Private key for the client certificate used to prove the identity of the aggregator or kube-apiserver "+
		"when it must call out during a request.")
	fs.StringVar(&o.PeerCAFile, "peer-ca-file", o.PeerCAFile, "If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, "+
		"this file will be used to verify serving certificates of peer kube-apiservers.")
	fs.StringVar(&o.PeerAdvertiseIP, "peer-advertise-ip", o.PeerAdvertiseIP, "If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, "+
		"this IP will be used by peer kube-apiservers to proxy requests to this kube-apiserver.")
	fs.StringVar(&o.PeerAdvertisePort, "peer-advertise-port", o.PeerAdvertisePort, "If set and the UnknownVersionInteroperabilityProxy feature gate is enabled, "+
		"this port will be used by peer kube-apiservers to proxy requests to this kube-apiserver.")
	fs.BoolVar(&o.EnableAggregatorRouting, "enable-aggregator-routing", o.EnableAggregatorRouting, "Turns on aggregator routing requests to endpoints IP rather than cluster IP.")
	fs.BoolVar(&o.AggregatorRejectForwardingRedirects, "aggregator-reject-forwarding-redirect", o.AggregatorRejectForwardingRedirects, "Aggregator reject forwarding redirect response back to client.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile, "Path to the file that contains the current private key "+
		"of the service account token issuer. The issuer will sign issued ID tokens with this private key.")
	fs.StringVar(&o.ServiceAccountSigningEndpoint, "service-account-signing-endpoint", o.ServiceAccountSigningEndpoint, "Path to socket where a external JWT signer is listening.")
	fs.DurationVar(&o.CoordinatedLeadershipLeaseDuration, "coordinated-leadership-lease-duration", o.CoordinatedLeadershipLeaseDuration, "The duration of the lease used for Coordinated Leader Election.")
	fs.DurationVar(&o.CoordinatedLeadershipRenewDeadline, "coordinated-leadership-renew-deadline", o.CoordinatedLeadershipRenewDeadline, "The deadline for renewing a coordinated leader election lease.")
	fs.DurationVar(&o.CoordinatedLeadershipRetryPeriod, "coordinated-leadership-retry-period", o.CoordinatedLeadershipRetryPeriod, "The period for retrying to renew a coordinated leader election lease.")
	fs.BoolVar(&o.AllowPrivileged, "allow-privileged", o.AllowPrivileged, "If true, allow privileged containers. [default=false]")
	fs.StringVar(&o.EndpointReconcilerType, "endpoint-reconciler-type", o.EndpointReconcilerType, "Use an endpoint reconciler (master-count, lease, none) "+
		"master-count is deprecated, and will be removed in a future version.")
	fs.IntVar(&o.KubernetesServiceNodePort, "kubernetes-service-node-port", o.KubernetesServiceNodePort, "If non-zero, the Kubernetes master service "+
		"(which apiserver creates/maintains) will be of type NodePort, using this as the value of the port.")
	fs.StringVar(&o.ServiceClusterIPRanges, "service-cluster-ip-range", o.ServiceClusterIPRanges, "A CIDR notation IP range from which to assign service cluster IPs. "+
		"This must not overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed.")
	fs.Var(&o.ServiceNodePortRange, "service-node-port-range", "A port range to reserve for services with NodePort visibility. "+
		"This must not overlap with the ephemeral port range on nodes. Example: '30000-32767'. Inclusive at both ends of the range.")
	fs.StringSliceVar(&o.KubeletPreferredAddresses, "kubelet-preferred-address-types", o.KubeletPreferredAddresses, "List of the preferred NodeAddressTypes to use for kubelet connections.")
	fs.UintVar(&o.KubeletPort, "kubelet-port", o.KubeletPort, "DEPRECATED: kubelet port.")
	_ = fs.MarkDeprecated("kubelet-port", "kubelet-port is deprecated and will be removed.")
	fs.UintVar(&o.KubeletReadOnlyPort, "kubelet-read-only-port", o.KubeletReadOnlyPort, "DEPRECATED: kubelet read only port.")
	_ = fs.MarkDeprecated("kubelet-read-only-port", "kubelet-read-only-port is deprecated and will be removed.")
	fs.DurationVar(&o.KubeletTimeout, "kubelet-timeout", o.KubeletTimeout, "Timeout for kubelet operations.")
	fs.StringVar(&o.KubeletClientCertificate, "kubelet-client-certificate", o.KubeletClientCertificate, "Path to a client cert file for TLS.")
	fs.StringVar(&o.KubeletClientKey, "kubelet-client-key", o.KubeletClientKey, "Path to a client key file for TLS.")
	fs.StringVar(&o.KubeletCA, "kubelet-certificate-authority", o.KubeletCA, "Path to a cert file for the certificate authority.")
	fs.IntVar(&o.MasterCount, "apiserver-count", o.MasterCount, "The number of apiservers running in the cluster, must be a positive number. "+
		"(In use when --endpoint-reconciler-type=master-count is enabled.)")
	_ = fs.MarkDeprecated("apiserver-count", "apiserver-count is deprecated and will be removed in a future version.")
}
