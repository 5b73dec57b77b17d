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

package apis

import (
	"fmt"
	"net/http"
	"time"

	restful "github.com/emicklei/go-restful/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
)

// Identity is what the APIs that authenticate and authorize answer with:
// the reviews, service account tokens, RBAC's escalation checks and the
// pods' streams; and the service account issuer's discovery. All of it
// but JWKSURI is required.
type Identity struct {
	// Authorizer and Rules answer SubjectAccessReviews and
	// SelfSubjectRulesReviews, and check RBAC writes for escalation.
	Authorizer authorizer.Authorizer
	Rules      authorizer.RuleResolver
	// Tokens authenticates bearer tokens (TokenReview).
	Tokens authenticator.Token
	// ServiceAccounts issues TokenRequest's tokens.
	ServiceAccounts *auth.ServiceAccountTokens
	// JWKSURI is the key set's URI the OpenID configuration names
	// (--service-account-jwks-uri); empty: the server's own.
	JWKSURI string
}

// issue is a serviceaccount.IssueFunc over id.ServiceAccounts.
func (id Identity) issue(sa *corev1.ServiceAccount, audiences []string, ttl time.Duration, kind, name string, uid types.UID) (string, time.Time, error) {
	var binding *auth.Binding
	if kind != "" {
		binding = &auth.Binding{Kind: kind, Name: name, UID: string(uid)}
	}
	return id.ServiceAccounts.Issue(sa, audiences, ttl, binding)
}

// installIssuerDiscovery serves the service account issuer's OpenID
// configuration and key set in s, as kube-apiserver does (k8s.io/kubernetes'
// pkg/routes/openidmetadata.go): unless the issuer or JWKSURI is not an
// https URL, which upstream logs and serves nothing for.
func (id Identity) installIssuerDiscovery(s *genericapiserver.GenericAPIServer) {
	md, err := id.ServiceAccounts.OpenIDMetadata(id.JWKSURI, s.ExternalAddress)
	if err != nil {
		klog.Errorf("Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery endpoints. Endpoints will not be enabled. Error: %v", err)
		return
	}
	serve := func(contentType string, document func() ([]byte, error)) restful.RouteFunction {
		return func(_ *restful.Request, resp *restful.Response) {
			body, err := document()
			if err != nil {
				http.Error(resp, err.Error(), http.StatusInternalServerError)
				return
			}
			resp.Header().Set(restful.HEADER_ContentType, contentType)
			resp.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", 3600)) // upstream's for its static keys
			_, _ = resp.Write(body)
		}
	}
	config := new(restful.WebService).Produces(restful.MIME_JSON)
	config.Path(auth.OpenIDConfigPath).Route(config.GET("").To(serve(restful.MIME_JSON, md.Config)).
		Doc("get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'").
		Operation("getServiceAccountIssuerOpenIDConfiguration").Returns(http.StatusOK, "OK", ""))
	s.Handler.GoRestfulContainer.Add(config)
	const jwks = "application/jwk-set+json"
	keys := new(restful.WebService).Produces(jwks)
	keys.Path(auth.JWKSPath).Route(keys.GET("").To(serve(jwks, md.KeySet)).
		Doc("get service account issuer OpenID JSON Web Key Set (contains public token verification keys)").
		Operation("getServiceAccountIssuerOpenIDKeyset").Returns(http.StatusOK, "OK", ""))
	s.Handler.GoRestfulContainer.Add(keys)
}
