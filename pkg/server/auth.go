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
	"context"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authorizerunion "k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
)

// publicPaths are served to anonymous clients (system:public-info-viewer's
// paths); everything else is forbidden to them.
var publicPaths = []string{"/livez", "/readyz", "/healthz", "/version"}

// serviceAccountIssuer is the issuer of the service account tokens, and
// the API's audience (kubeadm's --service-account-issuer).
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// newTokenAuthenticator authenticates the bearer tokens kube-apiserver
// would, in its order: the tokens of tokenFile (upstream's
// --token-auth-file CSV; "" for none), service account tokens, and the
// admin token (a member of system:masters).
func newTokenAuthenticator(adminToken, tokenFile string, serviceAccounts *auth.ServiceAccountTokens) (authenticator.Token, error) {
	var chain []authenticator.Token
	if tokenFile != "" {
		tokens, err := tokenfile.NewCSV(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		chain = append(chain, tokens)
	}
	chain = append(chain, serviceAccounts, authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		if subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) != 1 {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}}, true, nil
	}))
	return tokenunion.New(chain...), nil
}

// newAuthenticator authenticates as kube-apiserver does: client
// certificates signed by the data dir's CA (the user is the certificate's
// CN, its groups its O), then bearer tokens; every authenticated user is
// in system:authenticated. Anonymous requests reach the public paths only.
func newAuthenticator(caPEM []byte, tokens authenticator.Token) (authenticator.Request, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("the data dir's CA certificate does not parse")
	}
	opts := x509request.DefaultVerifyOptions()
	opts.Roots = roots
	authenticated := group.NewAuthenticatedGroupAdder(union.New(x509request.New(opts, x509request.CommonNameUserConversion), bearertoken.New(tokens)))
	// A request without credentials is system:anonymous, as with
	// kube-apiserver's --anonymous-auth=true (RBAC answers it: 403 but for
	// the public paths); wrong credentials are a 401.
	return union.NewFailOnError(authenticated, anonymous.NewAuthenticator(nil)), nil
}

// clientLookup finds the objects service account tokens name through the
// server's own (loopback) client.
type clientLookup struct {
	client kubernetes.Interface
}

func (l clientLookup) ServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return l.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
}

func (l clientLookup) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return l.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

func (l clientLookup) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return l.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// Authorization modes (--authorization-mode).
const (
	AuthorizationRBAC        = "RBAC"
	AuthorizationAlwaysAllow = "AlwaysAllow"
)

// newAuthorizer authorizes as kube-apiserver with --authorization-mode=RBAC
// (Node aside): members of system:masters may do anything, everyone the
// public paths, and the others what RBAC allows, from the RBAC objects in
// factory's informers. AlwaysAllow allows everything.
func newAuthorizer(mode string, factory informers.SharedInformerFactory) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	if mode == AuthorizationAlwaysAllow {
		a := authorizerfactory.NewAlwaysAllowAuthorizer()
		return a, a, nil
	}
	rbac := factory.Rbac().V1()
	bindings, clusterBindings := rbac.RoleBindings().Informer(), rbac.ClusterRoleBindings().Informer()
	for _, i := range []cache.SharedIndexInformer{bindings, clusterBindings} {
		if err := i.AddIndexers(auth.BindingIndexers); err != nil {
			return nil, nil, err
		}
	}
	r := &auth.RBAC{
		Roles:               rbac.Roles().Lister(),
		ClusterRoles:        rbac.ClusterRoles().Lister(),
		RoleBindings:        bindings.GetIndexer(),
		ClusterRoleBindings: clusterBindings.GetIndexer(),
	}
	masters := authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)
	a, err := authorizerunion.New(
		authorizerunion.NamedAuthorizer{AuthorizerName: "system:masters", Authorizer: masters},
		authorizerunion.NamedAuthorizer{AuthorizerName: "public-info", Authorizer: publicInfo{}},
		authorizerunion.NamedAuthorizer{AuthorizerName: "RBAC", Authorizer: r},
	)
	if err != nil {
		return nil, nil, err
	}
	return a, r, nil
}

// publicInfo lets everyone get the public paths, as the default binding of
// system:public-info-viewer does, from the first request on (before the
// RBAC informers have the default roles).
type publicInfo struct{}

func (publicInfo) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !a.IsResourceRequest() && a.GetVerb() == "get" && (isPublic(a.GetPath()) || a.GetPath() == "/version/") {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (p publicInfo) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(p.Authorize(ctx, a))
}

func (publicInfo) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func isPublic(path string) bool {
	for _, p := range publicPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// quietFailures answers a request whose credentials auth rejects with an
// error (a wrong token, say) as one without credentials: 401 all the same,
// but logged at V(2) through the request's logger, which says which server
// (see withLogger). Upstream's authentication filter logs such an error at
// error level through klog's global logger: a client's mistake would read
// as a server fault, in the log of every test with a server running.
func quietFailures(auth authenticator.Request) authenticator.Request {
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := auth.AuthenticateRequest(req)
		if err != nil && !ok {
			klog.FromContext(req.Context()).V(2).Info("Unable to authenticate the request", "err", err)
			return nil, false, nil
		}
		return resp, ok, err
	})
}
