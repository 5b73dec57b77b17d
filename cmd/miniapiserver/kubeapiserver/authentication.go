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
	"crypto"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/util/keyutil"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
	"github.com/miniapiserver/miniapiserver/pkg/server"
)

// authenticationOptions are kube-apiserver's authentication flags (a port
// of k8s.io/kubernetes's BuiltInAuthenticationOptions: the client
// certificate and request-header parts are k8s.io/apiserver's).
type authenticationOptions struct {
	ConfigFile            string
	APIAudiences          []string
	Anonymous             bool
	BootstrapToken        bool
	ClientCert            genericoptions.ClientCertAuthenticationOptions
	OIDC                  oidcOptions
	RequestHeader         genericoptions.RequestHeaderAuthenticationOptions
	ServiceAccountKeys    []string
	ServiceAccountLookup  bool
	ServiceAccountIssuers []string
	JWKSURI               string
	MaxExpiration         time.Duration
	ExtendExpiration      bool
	TokenFile             string
	Webhook               webhookOptions
}

type oidcOptions struct {
	IssuerURL, ClientID, CAFile, UsernameClaim, UsernamePrefix, GroupsClaim, GroupsPrefix string
	SigningAlgs                                                                           []string
	RequiredClaims                                                                        map[string]string
}

type webhookOptions struct {
	ConfigFile, Version string
	CacheTTL            time.Duration
}

func newAuthenticationOptions() *authenticationOptions {
	return &authenticationOptions{
		Anonymous:            true,
		OIDC:                 oidcOptions{UsernameClaim: "sub", SigningAlgs: []string{"RS256"}},
		ServiceAccountLookup: true,
		ExtendExpiration:     true,
		Webhook:              webhookOptions{Version: "v1beta1", CacheTTL: 2 * time.Minute},
	}
}

// AddFlags adds kube-apiserver's authentication flags, with its help.
func (o *authenticationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "authentication-config", o.ConfigFile,
		"File with Authentication Configuration to configure the JWT Token authenticator or the anonymous authenticator.")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences, "Identifiers of the API. The service account token authenticator will validate that "+
		"tokens used against the API are bound to at least one of these audiences. If the --service-account-issuer flag is configured and this flag is not, "+
		"this field defaults to a single element list containing the issuer URL.")
	fs.BoolVar(&o.Anonymous, "anonymous-auth", o.Anonymous, "Enables anonymous requests to the secure port of the API server. "+
		"Requests that are not rejected by another authentication method are treated as anonymous requests. "+
		"Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.")
	fs.BoolVar(&o.BootstrapToken, "enable-bootstrap-token-auth", o.BootstrapToken, "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' "+
		"in the 'kube-system' namespace to be used for TLS bootstrapping authentication.")
	o.ClientCert.AddFlags(fs)
	fs.StringVar(&o.OIDC.IssuerURL, "oidc-issuer-url", o.OIDC.IssuerURL, "The URL of the OpenID issuer, only HTTPS scheme will be accepted. "+
		"If set, it will be used to verify the OIDC JSON Web Token (JWT).")
	fs.StringVar(&o.OIDC.ClientID, "oidc-client-id", o.OIDC.ClientID, "The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.")
	fs.StringVar(&o.OIDC.CAFile, "oidc-ca-file", o.OIDC.CAFile, "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used.")
	fs.StringVar(&o.OIDC.UsernameClaim, "oidc-username-claim", o.OIDC.UsernameClaim, "The OpenID claim to use as the user name.")
	fs.StringVar(&o.OIDC.UsernamePrefix, "oidc-username-prefix", o.OIDC.UsernamePrefix, "If provided, all usernames will be prefixed with this value.")
	fs.StringVar(&o.OIDC.GroupsClaim, "oidc-groups-claim", o.OIDC.GroupsClaim, "If provided, the name of a custom OpenID Connect claim for specifying user groups.")
	fs.StringVar(&o.OIDC.GroupsPrefix, "oidc-groups-prefix", o.OIDC.GroupsPrefix, "If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.")
	fs.StringSliceVar(&o.OIDC.SigningAlgs, "oidc-signing-algs", o.OIDC.SigningAlgs, "Comma-separated list of allowed JOSE asymmetric signing algorithms.")
	fs.Var(cliflag.NewMapStringStringNoSplit(&o.OIDC.RequiredClaims), "oidc-required-claim", "A key=value pair that describes a required claim in the ID Token. Repeat this flag to specify multiple claims.")
	o.RequestHeader.AddFlags(fs)
	fs.StringArrayVar(&o.ServiceAccountKeys, "service-account-key-file", o.ServiceAccountKeys, "File containing PEM-encoded x509 RSA or ECDSA private or public keys, "+
		"used to verify ServiceAccount tokens. The specified file can contain multiple keys, and the flag can be specified multiple times with different files. "+
		"Must be specified when --service-account-signing-key-file is provided")
	fs.BoolVar(&o.ServiceAccountLookup, "service-account-lookup", o.ServiceAccountLookup, "If true, validate ServiceAccount tokens exist in etcd as part of authentication.")
	fs.StringArrayVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers, "Identifier of the service account token issuer. "+
		"The issuer will assert this identifier in \"iss\" claim of issued tokens. When this flag is specified multiple times, "+
		"the first is used to generate tokens and all are used to determine which issuers are accepted.")
	fs.StringVar(&o.JWKSURI, "service-account-jwks-uri", o.JWKSURI, "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration.")
	fs.DurationVar(&o.MaxExpiration, "service-account-max-token-expiration", o.MaxExpiration, "The maximum validity duration of a token created by the service account token issuer.")
	fs.BoolVar(&o.ExtendExpiration, "service-account-extend-token-expiration", o.ExtendExpiration, "Turns on projected service account expiration extension during token generation.")
	fs.StringVar(&o.TokenFile, "token-auth-file", o.TokenFile, "If set, the file that will be used to secure the secure port of the API server via token authentication.")
	fs.StringVar(&o.Webhook.ConfigFile, "authentication-token-webhook-config-file", o.Webhook.ConfigFile, "File with webhook configuration for token authentication in kubeconfig format.")
	fs.StringVar(&o.Webhook.Version, "authentication-token-webhook-version", o.Webhook.Version, "The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.")
	fs.DurationVar(&o.Webhook.CacheTTL, "authentication-token-webhook-cache-ttl", o.Webhook.CacheTTL, "The duration to cache responses from the webhook token authenticator.")
}

// Validate reports what kube-apiserver refuses, in its words.
func (o *authenticationOptions) Validate(signingKeyFile string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, issuer := range o.ServiceAccountIssuers {
		switch {
		case issuer == "":
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
		case seen[issuer]:
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", issuer))
		}
		seen[issuer] = true
	}
	errs = append(errs, o.RequestHeader.Validate()...)
	if len(o.ServiceAccountIssuers) == 0 {
		errs = append(errs, errors.New("service-account-issuer is a required flag"))
	}
	if len(o.ServiceAccountKeys) == 0 {
		errs = append(errs, errors.New("either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"))
	}
	issuer := len(o.ServiceAccountIssuers) != 0 && o.ServiceAccountIssuers[0] != ""
	switch {
	case signingKeyFile == "" && !issuer && len(o.APIAudiences) == 0:
		errs = append(errs, errors.New("--service-account-signing-key-file and --service-account-issuer are required flags"))
	case signingKeyFile == "" || !issuer:
		errs = append(errs, errors.New("--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together"))
	}
	return errs
}

// applyTo sets s's authentication: the client CA, the request headers of
// a front proxy, anonymous requests, and the service accounts' issuers
// and keys (signingKeyFile signs).
func (o *authenticationOptions) applyTo(s *server.Serving, signingKeyFile string) error {
	s.Anonymous = o.Anonymous
	if o.ClientCert.ClientCA != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCert.ClientCA)
		if err != nil {
			return fmt.Errorf("--client-ca-file: %w", err)
		}
		s.ClientCA = ca
	}
	rh, err := o.RequestHeader.ToAuthenticationRequestHeaderConfig()
	if err != nil {
		return fmt.Errorf("--requestheader-client-ca-file: %w", err)
	}
	s.RequestHeader = rh
	signer, err := keyutil.PrivateKeyFromFile(signingKeyFile)
	if err != nil {
		return fmt.Errorf("failed to parse service-account-issuer-key-file: %w", err)
	}
	s.ServiceAccounts.Signer, _ = signer.(crypto.Signer)
	if s.ServiceAccounts.Signer == nil {
		return fmt.Errorf("--service-account-signing-key-file: %T is no signing key", signer)
	}
	for _, f := range o.ServiceAccountKeys {
		keys, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return fmt.Errorf("--service-account-key-file: %w", err)
		}
		for _, k := range keys {
			s.ServiceAccounts.PublicKeys = append(s.ServiceAccounts.PublicKeys, k)
		}
	}
	if !slices.ContainsFunc(s.ServiceAccounts.PublicKeys, func(k crypto.PublicKey) bool {
		eq, ok := k.(interface{ Equal(crypto.PublicKey) bool })
		return ok && eq.Equal(s.ServiceAccounts.Signer.Public())
	}) {
		return fmt.Errorf("--service-account-signing-key-file %s: its public key is in no --service-account-key-file: the tokens it signs would not authenticate", signingKeyFile)
	}
	s.ServiceAccounts.Issuers, s.ServiceAccounts.JWKSURI = o.ServiceAccountIssuers, o.JWKSURI
	s.APIAudiences = o.APIAudiences
	if len(s.APIAudiences) == 0 {
		s.APIAudiences = o.ServiceAccountIssuers
	}
	return nil
}

// authorizationOptions are kube-apiserver's authorization flags (a port of
// k8s.io/kubernetes's BuiltInAuthorizationOptions).
type authorizationOptions struct {
	Modes                       []string
	PolicyFile                  string
	WebhookConfigFile           string
	WebhookVersion              string
	WebhookCacheAuthorizedTTL   time.Duration
	WebhookCacheUnauthorizedTTL time.Duration
	ConfigFile                  string
}

// AddFlags adds kube-apiserver's authorization flags, with its help.
func (o *authorizationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Modes, "authorization-mode", o.Modes, "Ordered list of plug-ins to do authorization on secure port. "+
		"Defaults to AlwaysAllow if --authorization-config is not used. Comma-delimited list of: AlwaysAllow,AlwaysDeny,ABAC,Webhook,RBAC,Node.")
	fs.StringVar(&o.PolicyFile, "authorization-policy-file", o.PolicyFile, "File with authorization policy in json line by line format, "+
		"used with --authorization-mode=ABAC, on the secure port.")
	fs.StringVar(&o.WebhookConfigFile, "authorization-webhook-config-file", o.WebhookConfigFile, "File with webhook configuration in kubeconfig format, "+
		"used with --authorization-mode=Webhook.")
	fs.StringVar(&o.WebhookVersion, "authorization-webhook-version", o.WebhookVersion, "The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.")
	fs.DurationVar(&o.WebhookCacheAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.WebhookCacheAuthorizedTTL, "The duration to cache 'authorized' responses from the webhook authorizer.")
	fs.DurationVar(&o.WebhookCacheUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.WebhookCacheUnauthorizedTTL, "The duration to cache 'unauthorized' responses from the webhook authorizer.")
	fs.StringVar(&o.ConfigFile, "authorization-config", o.ConfigFile, "File with Authorization Configuration to configure the authorizer chain.")
}

// mode is the modes as server.Options takes them: AlwaysAllow if none,
// as upstream.
func (o *authorizationOptions) mode() string {
	if len(o.Modes) == 0 {
		return auth.AuthorizationAlwaysAllow
	}
	return strings.Join(o.Modes, ",")
}
