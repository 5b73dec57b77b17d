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
	"crypto"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/server/datadir"
)

// Config is what New needs: validated options, how to serve and whom to
// trust. One made by Options.Config holds its data dir's lock until Close.
type Config struct {
	Options Options
	Serving Serving
	// Admin is a client config of a member of system:masters: WaitReady's
	// installs use it, and New writes it to KubeconfigPath (unless empty).
	Admin          *rest.Config
	KubeconfigPath string
	// Generic, if set, applies kube-apiserver's generic options (the
	// ApplyTo of k8s.io/apiserver's option structs) to the generic
	// server's config, after ours.
	Generic func(*genericapiserver.Config) error
	// userCA signs the certificates of UserConfig; nil without a data dir.
	userCA *datadir.Credentials
	lock   *datadir.Lock
}

// Serving is how a server serves and whom it trusts, made from a data dir
// (Options.Config) or from kube-apiserver's flags (NewConfig).
type Serving struct {
	// SecureServing is the listener and the serving certificates (its
	// ClientCA is ClientCA).
	SecureServing *genericapiserver.SecureServingInfo
	// Loopback is the server's client of itself, with a bearer token of
	// its own (the generic server makes it system:apiserver's).
	Loopback *rest.Config
	// PublicAddress is the address the server advertises
	// (--advertise-address).
	PublicAddress net.IP
	// ServingCA verifies the serving certificate (PEM), if known: it is
	// published as the kube-root-ca.crt ConfigMaps.
	ServingCA []byte
	// ClientCA verifies client certificates (the user is the CN, the
	// groups the Os); nil: none are asked for.
	ClientCA dynamiccertificates.CAContentProvider
	// RequestHeader, if set, authenticates the users a front proxy (an
	// aggregator) names in its headers (kube-apiserver's --requestheader-*).
	RequestHeader *authenticatorfactory.RequestHeaderConfig
	// Anonymous makes a request without credentials system:anonymous's;
	// false: a 401 (--anonymous-auth).
	Anonymous bool
	// AdminToken, if set, is a bearer token of a member of system:masters.
	AdminToken string
	// ServiceAccounts sign and check service account tokens.
	ServiceAccounts ServiceAccountKeys
	// APIAudiences are the audiences of tokens for the API (--api-audiences).
	APIAudiences []string
}

// ServiceAccountKeys are kube-apiserver's --service-account-issuer,
// --service-account-signing-key-file and --service-account-key-file.
type ServiceAccountKeys struct {
	// Issuers: the first is the iss of the tokens the server issues; a
	// token of any of them authenticates.
	Issuers []string
	// Signer signs the tokens (RSA or ECDSA).
	Signer crypto.Signer
	// PublicKeys check them; none: Signer's public half.
	PublicKeys []crypto.PublicKey
	// JWKSURI is the URI of their key set the issuer's discovery names;
	// empty: this server's /openid/v1/jwks.
	JWKSURI string
}

// NewConfig validates o and s and returns the Config of a server without a
// data dir: its admin is its loopback client. The caller owns the listener
// of s: Close the Config once the server's Run has returned, or when New
// fails.
func NewConfig(o Options, s Serving) (*Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &Config{Options: o, Serving: s, Admin: rest.CopyConfig(s.Loopback)}, nil
}

func (s *Serving) validate() error {
	var errs []error
	if s.SecureServing == nil || s.SecureServing.Listener == nil {
		errs = append(errs, errors.New("serving: no listener"))
	}
	if s.Loopback == nil || s.Loopback.BearerToken == "" {
		errs = append(errs, errors.New("serving: no loopback client config with a bearer token"))
	}
	if len(s.ServiceAccounts.Issuers) == 0 || s.ServiceAccounts.Signer == nil {
		errs = append(errs, errors.New("serving: service accounts need an issuer and a signing key"))
	}
	return errors.Join(errs...)
}

// serviceAccountIssuer is the issuer of the service account tokens of a
// server with a data dir, and its API's audience (kubeadm's
// --service-account-issuer).
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// Config validates o, creates and locks the data dir, and creates the
// credentials and the listener. The caller owns the result: Close it once
// the server's Run has returned, or when New fails.
func (o *Options) Config() (c *Config, err error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating --data-dir: %w", err)
	}
	// Another user's dir, or files, could hold a CA or token of theirs.
	if err := datadir.CheckOwned(dataDir); err != nil {
		return nil, err
	}
	// It holds keys and the admin token: private even if it existed before.
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	lock, err := datadir.TakeLock(dataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lock.Release()
		}
	}()
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if ip := net.ParseIP(o.BindAddress); !ip.IsUnspecified() && !ip.IsLoopback() {
		hosts = append(hosts, o.BindAddress)
	}
	creds, err := datadir.LoadOrCreateCredentials(dataDir, hosts)
	if err != nil {
		return nil, fmt.Errorf("preparing credentials: %w", err)
	}
	serving, admin, err := dataDirServing(o.BindAddress, o.SecurePort, creds)
	if err != nil {
		return nil, err
	}
	opts := *o
	opts.DataDir = dataDir
	if opts.Aggregator.ProxyClientCertFile == "" { // the front proxy's, as kubeadm's
		opts.Aggregator.ProxyClientCertFile, opts.Aggregator.ProxyClientKeyFile = creds.FrontProxy.ClientCertFile, creds.FrontProxy.ClientKeyFile
	}
	return &Config{Options: opts, Serving: serving, Admin: admin, KubeconfigPath: datadir.KubeconfigPath(dataDir), userCA: creds, lock: lock}, nil
}

// dataDirServing listens on bindAddress:port and serves with the data
// dir's serving certificate; its CA verifies client certificates, the
// front proxy's CA the front proxy's, and the admin (and the loopback
// client) have tokens of their own.
func dataDirServing(bindAddress string, port int, creds *datadir.Credentials) (Serving, *rest.Config, error) {
	cert, err := dynamiccertificates.NewStaticCertKeyContent("serving-cert", creds.ServingCert, creds.ServingKey)
	if err != nil {
		return Serving{}, nil, err
	}
	clientCA, err := dynamiccertificates.NewStaticCAContent("client-ca", creds.CACert)
	if err != nil {
		return Serving{}, nil, err
	}
	requestHeader, err := creds.FrontProxy.RequestHeader()
	if err != nil {
		return Serving{}, nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(bindAddress, strconv.Itoa(port)))
	if err != nil {
		return Serving{}, nil, fmt.Errorf("listening on %s:%d: %w", bindAddress, port, err)
	}
	public := net.ParseIP(bindAddress)
	if public.IsUnspecified() {
		public = net.ParseIP("127.0.0.1")
	}
	admin := &rest.Config{
		Host:            "https://" + net.JoinHostPort(public.String(), strconv.Itoa(l.Addr().(*net.TCPAddr).Port)),
		BearerToken:     creds.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: creds.CACert},
	}
	loopback := rest.CopyConfig(admin)
	loopback.BearerToken = datadir.NewToken()
	return Serving{
		SecureServing:   &genericapiserver.SecureServingInfo{Listener: l, Cert: cert, HTTP2MaxStreamsPerConnection: 1000},
		Loopback:        loopback,
		PublicAddress:   public,
		ServingCA:       creds.CACert,
		ClientCA:        clientCA,
		RequestHeader:   requestHeader,
		Anonymous:       true,
		AdminToken:      creds.AdminToken,
		ServiceAccounts: ServiceAccountKeys{Issuers: []string{serviceAccountIssuer}, Signer: creds.SAKey},
		APIAudiences:    []string{serviceAccountIssuer},
	}, admin, nil
}

// Close closes the listener (unless the server already did) and releases
// the data dir for the next server. It is safe to call more than once.
func (c *Config) Close() error {
	err := c.Serving.SecureServing.Listener.Close()
	if c.lock != nil {
		c.lock.Release()
	}
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// port is the port the server listens on.
func (c *Config) port() int {
	return c.Serving.SecureServing.Listener.Addr().(*net.TCPAddr).Port
}

type completedConfig struct {
	*Config
}

// CompletedConfig can only be made by Complete.
type CompletedConfig struct {
	*completedConfig
}

// Complete returns the config New takes.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{Config: c}}
}
