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

package server

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/admission/defaulttolerationseconds"
	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server/admissionchain"
	"github.com/miniapiserver/miniapiserver/pkg/server/aggregator"
	"github.com/miniapiserver/miniapiserver/pkg/server/apis"
	"github.com/miniapiserver/miniapiserver/pkg/server/controllers"
	"github.com/miniapiserver/miniapiserver/pkg/server/manifests"
	serverstorage "github.com/miniapiserver/miniapiserver/pkg/server/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/watchcache"
)

// Options are the settings of one miniapiserver, named as kube-apiserver names
// its flags. Only cmd/ binds them to flags.
type Options struct {
	// DataDir holds etcd's data, the certificates, the admin token and the kubeconfig.
	DataDir string
	// BindAddress is the IP to serve HTTPS on.
	BindAddress string
	// SecurePort is the HTTPS port; 0 picks a free one.
	SecurePort int
	// EtcdServers are external etcd client URLs; empty starts an embedded etcd in DataDir.
	EtcdServers []string
	// EtcdPrefix is prepended to every key in etcd (kube-apiserver's --etcd-prefix).
	EtcdPrefix string
	// EtcdCAFile, EtcdCertFile and EtcdKeyFile secure the connection to
	// external etcd servers with TLS and a client certificate.
	EtcdCAFile, EtcdCertFile, EtcdKeyFile string
	// AuthorizationMode is kube-apiserver's --authorization-mode: a
	// comma-separated list of RBAC (with system:masters allowed
	// everything), AlwaysAllow, AlwaysDeny and Node.
	AuthorizationMode string
	// TokenAuthFile is a CSV of bearer tokens (kube-apiserver's
	// --token-auth-file): token,user,uid,"group1,group2,...".
	TokenAuthFile string
	// WatchCache serves reads and watches from the watch cache (the etcd path when false).
	WatchCache bool
	// WatchCacheHistoryWindow is how long the watch cache keeps events that
	// watches can resume from (at least 75s, as kube-apiserver).
	WatchCacheHistoryWindow time.Duration
	// WatchCacheHistorySize caps those events per resource.
	WatchCacheHistorySize int
	// GarbageCollection makes deletes with the Foreground and Orphan
	// propagation policies wait for a garbage collector, as
	// kube-apiserver's --enable-garbage-collector (without it they delete
	// at once). The garbage collector itself is a controller (see
	// Controllers).
	GarbageCollection bool
	// PriorityAndFairness gives requests API priority and fairness
	// (kube-apiserver's --enable-priority-and-fairness): the FlowSchemas
	// and PriorityLevelConfigurations decide which wait and which get 429;
	// without it, the max-in-flight limits apply.
	PriorityAndFairness bool
	// Controllers are the in-server controllers to run, by
	// kube-controller-manager's names and in the syntax of its
	// --controllers: "*" runs those on by default (all but
	// controllers.GarbageCollector), "name" runs one, "-name" does not;
	// the first that names a controller decides. Empty runs none, as
	// kube-apiserver (whose controllers are kube-controller-manager's).
	Controllers []string
	// EnableAdmissionPlugins and DisableAdmissionPlugins turn admission
	// plugins on or off, as kube-apiserver's flags of those names: all of
	// admissionchain.NewOptions' are on unless disabled.
	EnableAdmissionPlugins, DisableAdmissionPlugins []string
	// AdmissionControlConfigFile configures the admission plugins
	// (kube-apiserver's --admission-control-config-file).
	AdmissionControlConfigFile string
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds are the seconds of the
	// tolerations the DefaultTolerationSeconds admission plugin adds to
	// pods (kube-apiserver's flags of those names).
	DefaultNotReadyTolerationSeconds, DefaultUnreachableTolerationSeconds int64
	// ServiceRanges are where Services' cluster IPs and node ports come
	// from (--service-cluster-ip-range, --service-node-port-range).
	ServiceRanges service.Ranges
	// CRDPaths are CustomResourceDefinition manifests (YAML or JSON files,
	// or directories of them, as envtest's CRDDirectoryPaths) that the
	// server installs, or updates, on start; WaitReady waits until they are
	// served.
	CRDPaths []string
	// CRDs are installed on start as CRDPaths' are (envtest's CRDs).
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// ConversionWebhook, if set, points the CRDs installed on start that
	// convert by webhook at a webhook server (as envtest points them at
	// the test's).
	ConversionWebhook *manifests.ConversionWebhook
	// MutatingWebhooks and ValidatingWebhooks are installed on start, after
	// the CRDs (envtest's WebhookInstallOptions): WaitReady returns once
	// admission calls them.
	MutatingWebhooks   []*admissionregistrationv1.MutatingWebhookConfiguration
	ValidatingWebhooks []*admissionregistrationv1.ValidatingWebhookConfiguration
	// Errors are what the code setting these options found wrong (e.g. a
	// webhook manifest it could not read); Validate reports them.
	Errors []error
	// WebhookServices are the local addresses of the Services that
	// webhooks (admission and CRD conversion) and APIServices refer to,
	// since there is no Service network: admissionchain.ServiceKey(namespace, name, port)
	// to "host:port".
	WebhookServices admissionchain.ServiceAddresses
	// EtcdCompactionInterval is how often old etcd revisions are compacted; 0 disables it.
	EtcdCompactionInterval time.Duration

	// EtcdProgressNotifyInterval is how often the embedded etcd reports its
	// revision to idle watchers (default 5s).
	EtcdProgressNotifyInterval time.Duration
	// EtcdUnsafeNoFsync skips fsync in the embedded etcd: for throwaway test data only.
	EtcdUnsafeNoFsync bool
	// Aggregator are the aggregator's flags.
	Aggregator aggregator.Options
	// Kubelet is how pods/log, pods/exec, pods/attach and
	// pods/portforward reach the kubelets.
	Kubelet KubeletOptions

	// TestControls turns on checkpoints and restore of the stored state
	// (Server.Checkpoint, Server.Restore; --test-controls), whose
	// compaction is held back for the checkpoints held, and fault rules
	// (Server.InjectFault).
	TestControls bool
}

// KubeletOptions are kube-apiserver's kubelet client flags.
type KubeletOptions struct {
	// ClientCertificate and ClientKey are the client certificate shown
	// to the kubelets (--kubelet-client-certificate, --kubelet-client-key).
	ClientCertificate, ClientKey string
	// CertificateAuthority verifies the kubelets' serving certificates
	// (--kubelet-certificate-authority); empty: they are not checked.
	CertificateAuthority string
	// PreferredAddressTypes are the node address types tried, in order
	// (--kubelet-preferred-address-types).
	PreferredAddressTypes []string
	// Port is the kubelet port of a node that reports none (--kubelet-port).
	Port int
}

// config is the registry's kubelet config of o (nil
// PreferredAddressTypes or Port: the defaults), but for the nodes it
// reads, which apis.Install sets.
func (o KubeletOptions) config() pod.KubeletConfig {
	var types []corev1.NodeAddressType
	if o.PreferredAddressTypes != nil { // empty: no kubelet is found, as upstream
		types = make([]corev1.NodeAddressType, len(o.PreferredAddressTypes))
		for i, t := range o.PreferredAddressTypes {
			types[i] = corev1.NodeAddressType(t)
		}
	}
	return pod.KubeletConfig{CertFile: o.ClientCertificate, KeyFile: o.ClientKey, CAFile: o.CertificateAuthority,
		PreferredAddressTypes: types, Port: o.Port}
}

// ConsistencyCheckerEnv, set to a duration ("10s"), makes every watch cache
// compare itself with etcd that often and when it stops, and panic on a
// mismatch, for test suites (see serverstorage.ConsistencyCheckerEnv).
const ConsistencyCheckerEnv = serverstorage.ConsistencyCheckerEnv

// NewOptions returns the defaults: ./.miniapiserver, 127.0.0.1:6443,
// embedded etcd, watch cache on, the in-server controllers on but the
// garbage collector.
func NewOptions() *Options {
	return &Options{
		DataDir:                 "./.miniapiserver",
		BindAddress:             "127.0.0.1",
		SecurePort:              6443,
		EtcdPrefix:              storage.DefaultPrefix,
		AuthorizationMode:       auth.AuthorizationRBAC,
		Controllers:             []string{"*"},
		ServiceRanges:           service.DefaultRanges,
		WatchCache:              true,
		PriorityAndFairness:     true,
		WatchCacheHistoryWindow: watchcache.DefaultHistoryWindow,
		WatchCacheHistorySize:   watchcache.DefaultMaxEvents,
		EtcdCompactionInterval:  5 * time.Minute,
		Kubelet:                 KubeletOptions{PreferredAddressTypes: defaultKubeletAddressTypes(), Port: pod.DefaultKubeletPort},

		DefaultNotReadyTolerationSeconds:    defaulttolerationseconds.DefaultSeconds,
		DefaultUnreachableTolerationSeconds: defaulttolerationseconds.DefaultSeconds,
	}
}

// defaultKubeletAddressTypes are kube-apiserver's default
// --kubelet-preferred-address-types.
func defaultKubeletAddressTypes() []string {
	types := make([]string, len(pod.DefaultKubeletAddressTypes))
	for i, t := range pod.DefaultKubeletAddressTypes {
		types[i] = string(t)
	}
	return types
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	var errs []error
	if o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if net.ParseIP(o.BindAddress) == nil {
		errs = append(errs, fmt.Errorf("--bind-address %q is not an IP address", o.BindAddress))
	}
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d must be between 0 and 65535", o.SecurePort))
	}
	if o.WatchCacheHistoryWindow < watchcache.DefaultHistoryWindow {
		errs = append(errs, fmt.Errorf("--watch-cache-history-window %s must be at least %s", o.WatchCacheHistoryWindow, watchcache.DefaultHistoryWindow))
	}
	if o.WatchCacheHistorySize < 1 {
		errs = append(errs, fmt.Errorf("--watch-cache-history-size %d must be positive", o.WatchCacheHistorySize))
	}
	if _, err := auth.AuthorizationModes(o.AuthorizationMode); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, controllers.Validate(o.Controllers)...)
	if err := o.ServiceRanges.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.TokenAuthFile != "" {
		if _, err := tokenfile.NewCSV(o.TokenAuthFile); err != nil {
			errs = append(errs, fmt.Errorf("--token-auth-file: %w", err))
		}
	}
	if !strings.HasPrefix(o.EtcdPrefix, "/") {
		errs = append(errs, fmt.Errorf("--etcd-prefix %q must start with /", o.EtcdPrefix))
	}
	if (o.EtcdCAFile != "" || o.EtcdCertFile != "" || o.EtcdKeyFile != "") && len(o.EtcdServers) == 0 {
		errs = append(errs, errors.New("--etcd-cafile, --etcd-certfile and --etcd-keyfile need --etcd-servers (the embedded etcd is reached over a private unix socket)"))
	}
	if (o.EtcdCertFile == "") != (o.EtcdKeyFile == "") {
		errs = append(errs, errors.New("--etcd-certfile and --etcd-keyfile go together"))
	}
	if o.EtcdCompactionInterval < 0 {
		errs = append(errs, fmt.Errorf("--etcd-compaction-interval %s must not be negative", o.EtcdCompactionInterval))
	}
	errs = append(errs, o.admissionOptions().Validate()...)
	if _, err := admissionchain.ParseServiceAddresses(o.WebhookServices); err != nil {
		errs = append(errs, fmt.Errorf("--webhook-service: %w", err))
	}
	errs = append(errs, o.Errors...)
	return errors.Join(errs...)
}

// admissionOptions are the admission plugins o turns on, and their
// configuration file.
func (o *Options) admissionOptions() *genericoptions.AdmissionOptions {
	a := admissionchain.NewOptions(o.EnableAdmissionPlugins, o.DisableAdmissionPlugins)
	a.ConfigFile = o.AdmissionControlConfigFile
	return a
}

// ServedGroupVersions are the built-in group versions a server serves: its
// own, apiextensions.k8s.io/v1 and apiregistration.k8s.io/v1 (not the
// test controls', served with Options.TestControls).
func ServedGroupVersions() []schema.GroupVersion {
	return append(apis.GroupVersions(), apiextensionsv1.SchemeGroupVersion, apiregistrationv1.SchemeGroupVersion)
}
