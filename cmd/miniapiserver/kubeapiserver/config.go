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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/google/uuid"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
	"github.com/miniapiserver/miniapiserver/pkg/registry/service"
	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/aggregator"
)

// Validate reports every invalid option, in kube-apiserver's words where
// it has them.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.Generic.Validate()...)
	errs = append(errs, o.Etcd.Validate()...)
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Audit.Validate()...)
	errs = append(errs, o.Features.Validate()...)
	errs = append(errs, o.Authentication.Validate(o.Misc.ServiceAccountSigningKeyFile)...)
	errs = append(errs, o.Admission.Validate()...)
	errs = append(errs, o.Metrics.Validate()...)
	errs = append(errs, o.Traces.Validate()...)
	if opts, err := o.serverOptions(); err != nil {
		errs = append(errs, err)
	} else if err := opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if cert := o.SecureServing.ServerCert.CertKey; cert.CertFile != "" && cert.KeyFile != "" {
		if _, err := tls.LoadX509KeyPair(cert.CertFile, cert.KeyFile); err != nil {
			errs = append(errs, fmt.Errorf("--tls-cert-file %s, --tls-private-key-file %s: %w", cert.CertFile, cert.KeyFile, err))
		}
	}
	if m := o.Misc; m.ProxyClientCertFile != "" && m.ProxyClientKeyFile != "" {
		if _, err := tls.LoadX509KeyPair(m.ProxyClientCertFile, m.ProxyClientKeyFile); err != nil {
			errs = append(errs, fmt.Errorf("--proxy-client-cert-file %s, --proxy-client-key-file %s: %w", m.ProxyClientCertFile, m.ProxyClientKeyFile, err))
		}
	}
	return utilerrors.NewAggregate(errs) // one line, as kube-apiserver's
}

// serviceRanges are --service-cluster-ip-range and --service-node-port-range.
func (o *Options) serviceRanges() (service.Ranges, error) {
	r := service.DefaultRanges
	if cidrs := o.Misc.ServiceClusterIPRanges; cidrs != "" {
		if strings.Contains(cidrs, ",") {
			return r, fmt.Errorf("--service-cluster-ip-range %q: dual-stack service ranges are not supported by miniapiserver (IPv4 only)", cidrs)
		}
		prefix, err := netip.ParsePrefix(cidrs)
		if err != nil {
			return r, fmt.Errorf("service-cluster-ip-range[0] is not a valid cidr")
		}
		r.ClusterIPs = prefix.Masked()
	}
	p := o.Misc.ServiceNodePortRange
	r.NodePorts = service.PortRange{Base: int32(p.Base), Size: int32(p.Size)}
	return r, r.Validate()
}

// Complete fills in what kube-apiserver derives from the other options:
// the advertised address and, with no serving certificate given or in
// --cert-dir, a self-signed one there.
func (o *Options) Complete() error {
	if err := o.Generic.DefaultAdvertiseAddress(o.SecureServing.SecureServingOptions); err != nil {
		return err
	}
	ranges, err := o.serviceRanges()
	if err != nil {
		return err
	}
	serviceIP := net.IP(ranges.KubernetesServiceIP().AsSlice())
	return o.SecureServing.MaybeDefaultWithSelfSignedCerts(o.Generic.AdvertiseAddress.String(),
		[]string{"kubernetes.default.svc", "kubernetes.default", "kubernetes"}, []net.IP{serviceIP})
}

// serverOptions are the server's options of o.
func (o *Options) serverOptions() (*server.Options, error) {
	opts := server.NewOptions()
	etcd := o.Etcd
	opts.EtcdServers = etcd.StorageConfig.Transport.ServerList
	opts.EtcdPrefix = etcd.StorageConfig.Prefix
	opts.EtcdCAFile, opts.EtcdCertFile, opts.EtcdKeyFile = etcd.StorageConfig.Transport.TrustedCAFile, etcd.StorageConfig.Transport.CertFile, etcd.StorageConfig.Transport.KeyFile
	opts.EtcdCompactionInterval = etcd.StorageConfig.CompactionInterval
	opts.WatchCache = etcd.EnableWatchCache
	opts.GarbageCollection = etcd.EnableGarbageCollection
	opts.PriorityAndFairness = o.Features.EnablePriorityAndFairness
	// kube-apiserver runs none of kube-controller-manager's controllers.
	opts.Controllers = nil
	opts.AuthorizationMode = o.Authorization.mode()
	opts.TokenAuthFile = o.Authentication.TokenFile
	o.Admission.applyTo(opts)
	ranges, err := o.serviceRanges()
	if err != nil {
		return nil, err
	}
	opts.ServiceRanges = ranges
	m := o.Misc
	opts.Kubelet = server.KubeletOptions{ClientCertificate: m.KubeletClientCertificate, ClientKey: m.KubeletClientKey, CertificateAuthority: m.KubeletCA,
		PreferredAddressTypes: m.KubeletPreferredAddresses, Port: int(m.KubeletPort)}
	opts.Aggregator = aggregator.Options{ProxyClientCertFile: m.ProxyClientCertFile, ProxyClientKeyFile: m.ProxyClientKeyFile,
		EndpointRouting: m.EnableAggregatorRouting, ForwardRedirects: !m.AggregatorRejectForwardingRedirects}
	if opts.TestControls, _, err = o.runtimeConfig(); err != nil {
		return nil, err
	}
	return opts, nil
}

// Config is the server's config: its options, serving and trust, and the
// generic options applied as kube-apiserver applies them. The caller owns
// it (Close).
func (o *Options) Config() (*server.Config, error) {
	opts, err := o.serverOptions()
	if err != nil {
		return nil, err
	}
	_, warnings, _ := o.runtimeConfig() // its errors are serverOptions'
	for _, w := range warnings {
		klog.Warning(w)
	}
	var serving server.Serving
	if err := o.SecureServing.SecureServingOptions.ApplyTo(&serving.SecureServing); err != nil {
		return nil, err
	}
	if serving.SecureServing == nil {
		return nil, errors.New("--secure-port 0 is not supported: this server serves HTTPS only")
	}
	if serving.Loopback, err = loopbackConfig(serving.SecureServing); err != nil {
		serving.SecureServing.Listener.Close()
		return nil, err
	}
	serving.PublicAddress = o.Generic.AdvertiseAddress
	if err := o.Authentication.applyTo(&serving, o.Misc.ServiceAccountSigningKeyFile); err != nil {
		serving.SecureServing.Listener.Close()
		return nil, err
	}
	cfg, err := server.NewConfig(*opts, serving)
	if err != nil {
		serving.SecureServing.Listener.Close()
		return nil, err
	}
	cfg.Generic = o.applyGeneric
	// Process-wide, as kube-apiserver's.
	pod.AllowPrivileged(o.Misc.AllowPrivileged)
	return cfg, nil
}

// applyGeneric applies kube-apiserver's generic options to c, as
// kube-apiserver does (k8s.io/apiserver's ApplyTo), but for the version
// and the feature gates, which stay the server's.
func (o *Options) applyGeneric(c *genericapiserver.Config) error {
	version, gates := c.EffectiveVersion, c.FeatureGate
	if err := o.Generic.ApplyTo(c); err != nil {
		return err
	}
	c.EffectiveVersion, c.FeatureGate = version, gates
	c.EnableProfiling = o.Features.EnableProfiling
	c.EnableContentionProfiling = o.Features.EnableContentionProfiling
	c.DebugSocketPath = o.Features.DebugSocketPath
	if err := o.Audit.ApplyTo(c); err != nil {
		return err
	}
	return o.Traces.ApplyTo(nil, c)
}

// loopbackConfig adds a self-signed certificate for the server's loopback
// client to serving (as k8s.io/apiserver's SecureServingOptionsWithLoopback
// does, with an ECDSA key: an RSA one takes a tenth of a second to make)
// and returns the client's config, with a token of its own.
func loopbackConfig(serving *genericapiserver.SecureServingInfo) (*rest.Config, error) {
	certPEM, keyPEM, err := selfSigned(genericapiserver.LoopbackClientServerNameOverride)
	if err != nil {
		return nil, fmt.Errorf("failed to generate self-signed certificate for loopback connection: %w", err)
	}
	cert, err := dynamiccertificates.NewStaticSNICertKeyContent("self-signed loopback", certPEM, keyPEM, genericapiserver.LoopbackClientServerNameOverride)
	if err != nil {
		return nil, err
	}
	serving.SNICerts = append([]dynamiccertificates.SNICertKeyContentProvider{cert}, serving.SNICerts...)
	return serving.NewLoopbackClientConfig(uuid.NewString(), certPEM)
}

// selfSigned returns a self-signed certificate for host, valid a year.
func selfSigned(host string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{host}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
