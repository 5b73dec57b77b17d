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

package testserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/pkg/server/manifests"
	"github.com/miniapiserver/miniapiserver/pkg/testserver/freeport"
)

// WebhookInstallOptions are controller-runtime envtest's options of the
// same name: webhook configurations to install, pointed at a webhook
// server the test runs on LocalServingHost:LocalServingPort with the
// certificate in LocalServingCertDir (tls.crt, tls.key), which
// LocalServingCAData trusts. controller-runtime's
// webhook.NewServer(webhook.Options{Host, Port, CertDir}) serves them as
// they are. See WithWebhooks.
type WebhookInstallOptions struct {
	// Paths are files or directories of webhook configuration manifests
	// (YAML or JSON; a kubebuilder project's config/webhook).
	Paths []string
	// MutatingWebhooks and ValidatingWebhooks are configurations to
	// install; PrepWithoutInstalling adds those of Paths.
	MutatingWebhooks   []*admissionregistrationv1.MutatingWebhookConfiguration
	ValidatingWebhooks []*admissionregistrationv1.ValidatingWebhookConfiguration
	// IgnoreErrorIfPathMissing skips Paths that do not exist.
	IgnoreErrorIfPathMissing bool
	// IgnoreSchemeConvertible, as envtest's, points every CRD's conversion
	// at the webhook server, not only those of ConvertibleKinds or whose
	// manifest asks for webhook conversion.
	IgnoreSchemeConvertible bool
	// ConvertibleKinds are the custom resource kinds whose CRDs convert by
	// webhook (envtest finds them in its Scheme; pkg/envtest does too).
	ConvertibleKinds []schema.GroupKind

	// LocalServingHost is the IP the webhook server listens on (default
	// 127.0.0.1); LocalServingPort its port (default a free one).
	LocalServingHost string
	LocalServingPort int
	// LocalServingCertDir holds the webhook server's tls.crt and tls.key
	// (default a new directory in the server's data dir, or a temporary
	// one that Cleanup removes).
	LocalServingCertDir string
	// LocalServingCAData is the CA bundle that trusts the serving
	// certificate; every webhook's caBundle is set to it.
	LocalServingCAData []byte
	// LocalServingHostExternalName is the host the API server calls
	// (default LocalServingHost).
	LocalServingHostExternalName string

	// MaxTime and PollInterval bound pkg/envtest's WaitForWebhooks
	// (WithWebhooks returns once admission calls the webhooks).
	MaxTime      time.Duration
	PollInterval time.Duration

	tempDir string // a cert dir to remove on Cleanup
}

// WithWebhooks installs o's webhook configurations when the server starts
// (Start returns once admission calls them), after preparing o as
// PrepWithoutInstalling does if it has not been; CRDs that convert by
// webhook are pointed at the same server, at path /convert, as envtest
// does. Run the webhook server at o.LocalServingHost, o.LocalServingPort
// with o.LocalServingCertDir's certificate.
func WithWebhooks(o *WebhookInstallOptions) func(*server.Options) {
	return func(opts *server.Options) {
		if len(o.LocalServingCAData) == 0 {
			if o.LocalServingCertDir == "" && opts.DataDir != "" {
				o.LocalServingCertDir = filepath.Join(opts.DataDir, "webhook-certs")
			}
			if err := o.PrepWithoutInstalling(); err != nil {
				opts.Errors = append(opts.Errors, err)
				return
			}
		}
		opts.MutatingWebhooks = append(opts.MutatingWebhooks, o.MutatingWebhooks...)
		opts.ValidatingWebhooks = append(opts.ValidatingWebhooks, o.ValidatingWebhooks...)
		opts.ConversionWebhook = o.ConversionWebhook()
	}
}

// ConversionWebhook is where CRDs that convert by webhook are pointed: the
// webhook server's /convert, as envtest points them. o must be prepared.
func (o *WebhookInstallOptions) ConversionWebhook() *manifests.ConversionWebhook {
	url := "https://" + o.hostPort() + "/convert"
	return &manifests.ConversionWebhook{
		ClientConfig: apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: o.LocalServingCAData},
		Kinds:        o.ConvertibleKinds,
		AllKinds:     o.IgnoreSchemeConvertible,
	}
}

// Install installs o's webhook configurations on the cluster config
// reaches, after preparing o as PrepWithoutInstalling does if it has not
// been, as envtest's Install: it returns once they are stored (not once
// the webhook server answers; WithWebhooks waits for that).
func (o *WebhookInstallOptions) Install(config *rest.Config) error {
	if len(o.LocalServingCAData) == 0 {
		if err := o.PrepWithoutInstalling(); err != nil {
			return err
		}
	}
	opts := server.NewOptions()
	opts.MutatingWebhooks, opts.ValidatingWebhooks = o.MutatingWebhooks, o.ValidatingWebhooks
	_, err := server.InstallOnto(context.Background(), config, opts)
	return err
}

// PrepWithoutInstalling reads Paths, picks the serving address, writes a
// new CA's serving certificate for it into LocalServingCertDir, and points
// every webhook at that address with the CA in its caBundle (a Service
// reference becomes a URL with the Service's path), as envtest's.
func (o *WebhookInstallOptions) PrepWithoutInstalling() error {
	for _, path := range o.Paths {
		if _, err := os.Stat(path); os.IsNotExist(err) && o.IgnoreErrorIfPathMissing {
			continue
		}
		mutating, validating, err := manifests.ReadWebhookConfigurations([]string{path})
		if err != nil {
			return err
		}
		o.MutatingWebhooks = append(o.MutatingWebhooks, mutating...)
		o.ValidatingWebhooks = append(o.ValidatingWebhooks, validating...)
	}
	if o.LocalServingHost == "" {
		o.LocalServingHost = "127.0.0.1"
	}
	if o.LocalServingPort == 0 {
		port, err := freeport.On(o.LocalServingHost)
		if err != nil {
			return fmt.Errorf("webhook serving port: %w", err)
		}
		o.LocalServingPort = port
	}
	if err := o.writeCertificate(); err != nil {
		return fmt.Errorf("webhook serving certificate: %w", err)
	}
	for _, c := range o.MutatingWebhooks {
		for i := range c.Webhooks {
			o.pointAt(&c.Webhooks[i].ClientConfig)
		}
	}
	for _, c := range o.ValidatingWebhooks {
		for i := range c.Webhooks {
			o.pointAt(&c.Webhooks[i].ClientConfig)
		}
	}
	return nil
}

// Cleanup removes the cert dir PrepWithoutInstalling made in the temporary
// directory (one in the server's data dir goes with it).
func (o *WebhookInstallOptions) Cleanup() error {
	if o.tempDir == "" {
		return nil
	}
	return os.RemoveAll(o.tempDir)
}

func (o *WebhookInstallOptions) hostPort() string {
	host := o.LocalServingHostExternalName
	if host == "" {
		host = o.LocalServingHost
	}
	return net.JoinHostPort(host, strconv.Itoa(o.LocalServingPort))
}

func (o *WebhookInstallOptions) pointAt(cc *admissionregistrationv1.WebhookClientConfig) {
	cc.CABundle = o.LocalServingCAData
	if cc.Service == nil {
		return
	}
	url := "https://" + o.hostPort() + "/"
	if cc.Service.Path != nil {
		url += strings.TrimLeft(*cc.Service.Path, "/")
	}
	cc.URL, cc.Service = &url, nil
}

// writeCertificate makes a CA and a serving certificate for localhost and
// the serving host, writes them to LocalServingCertDir (made if empty),
// and sets LocalServingCAData.
func (o *WebhookInstallOptions) writeCertificate() error {
	if o.LocalServingCertDir == "" {
		dir, err := os.MkdirTemp("", "miniapiserver-webhook-certs-")
		if err != nil {
			return err
		}
		o.LocalServingCertDir, o.tempDir = dir, dir
	}
	if err := os.MkdirAll(o.LocalServingCertDir, 0o700); err != nil {
		return err
	}
	var ips []net.IP
	dns := []string{"localhost"}
	for _, h := range []string{o.LocalServingHost, o.LocalServingHostExternalName} {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else if h != "" {
			dns = append(dns, h)
		}
	}
	certPEM, keyPEM, caPEM, err := servingCertificate(ips, dns)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.LocalServingCertDir, "tls.crt"), certPEM, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.LocalServingCertDir, "tls.key"), keyPEM, 0o600); err != nil {
		return err
	}
	o.LocalServingCAData = caPEM
	return nil
}

// servingCertificate makes a CA and a serving certificate for the IPs and
// DNS names it signs, valid for a year, with ECDSA P-256 keys as
// controller-runtime's envtest makes them: far cheaper to generate than
// RSA keys, and made at every start.
func servingCertificate(ips []net.IP, dns []string) (certPEM, keyPEM, caPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "miniapiserver-webhook-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}
