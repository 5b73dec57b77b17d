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

package datadir

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"path/filepath"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

const (
	frontProxyCACertFile     = "front-proxy-ca.crt"
	frontProxyCAKeyFile      = "front-proxy-ca.key"
	frontProxyClientCertFile = "front-proxy-client.crt"
	frontProxyClientKeyFile  = "front-proxy-client.key"
	// FrontProxyClientName is the common name of the front proxy's client
	// certificate, the one request-header authentication allows (as
	// kubeadm names it).
	FrontProxyClientName = "front-proxy-client"
)

// FrontProxy is a CA of its own and the client certificate it signs for
// the aggregator's proxy, as kubeadm makes them: extension API servers
// trust the users the proxy names in its request headers when it presents
// that certificate (kube-system/extension-apiserver-authentication holds
// the CA).
type FrontProxy struct {
	CACert                        []byte // PEM
	ClientCertFile, ClientKeyFile string
}

// RequestHeader is the request-header authentication that trusts fp's
// client certificate, with kubeadm's headers (and no UID header, as its
// flags give none).
func (fp FrontProxy) RequestHeader() (*authenticatorfactory.RequestHeaderConfig, error) {
	ca, err := dynamiccertificates.NewStaticCAContent("front-proxy-ca", fp.CACert)
	if err != nil {
		return nil, err
	}
	return &authenticatorfactory.RequestHeaderConfig{CAContentProvider: ca, UIDHeaders: headerrequest.StaticStringSlice{},
		UsernameHeaders: headerrequest.StaticStringSlice{"X-Remote-User"}, GroupHeaders: headerrequest.StaticStringSlice{"X-Remote-Group"},
		ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"}, AllowedClientNames: headerrequest.StaticStringSlice{FrontProxyClientName}}, nil
}

// loadOrCreateFrontProxy reads the front proxy's CA and client certificate
// from dir, creating them if missing; the certificate is issued anew when
// it does not chain to the CA or expires within a day.
func loadOrCreateFrontProxy(dir string) (FrontProxy, error) {
	caCertPath, caKeyPath := filepath.Join(dir, frontProxyCACertFile), filepath.Join(dir, frontProxyCAKeyFile)
	caCertPEM, caKeyPEM, err := loadOrCreateCA(caCertPath, caKeyPath, "front-proxy-ca")
	if err != nil {
		return FrontProxy{}, err
	}
	fp := FrontProxy{CACert: caCertPEM, ClientCertFile: filepath.Join(dir, frontProxyClientCertFile), ClientKeyFile: filepath.Join(dir, frontProxyClientKeyFile)}
	certPEM, _, found, err := loadPair(fp.ClientCertFile, fp.ClientKeyFile)
	if err != nil || (found && validFor(certPEM, caCertPEM, x509.ExtKeyUsageClientAuth, nil)) {
		return fp, err
	}
	ca, caKey, err := parse(caCertPEM, caKeyPEM, caCertPath, caKeyPath)
	if err != nil {
		return FrontProxy{}, err
	}
	_, _, err = issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: FrontProxyClientName},
		NotAfter:    time.Now().AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey, fp.ClientCertFile, fp.ClientKeyFile)
	return fp, err
}
