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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
)

// publicPaths are served to anonymous clients (system:public-info-viewer's
// paths); everything else is forbidden to them.
var publicPaths = []string{"/livez", "/readyz", "/healthz", "/version"}

// newTokenAuthenticator authenticates the bearer tokens kube-apiserver
// would, in its order: the tokens of tokenFile (upstream's
// --token-auth-file CSV; "" for none), service account tokens, and the
// admin token, if any (a member of system:masters).
func newTokenAuthenticator(adminToken, tokenFile string, serviceAccounts *auth.ServiceAccountTokens) (authenticator.Token, error) {
	var chain []authenticator.Token
	if tokenFile != "" {
		tokens, err := tokenfile.NewCSV(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		chain = append(chain, tokens)
	}
	chain = append(chain, serviceAccounts)
	if adminToken != "" {
		chain = append(chain, authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
			if subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) != 1 {
				return nil, false, nil
			}
			return &authenticator.Response{User: &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}}, true, nil
		}))
	}
	return tokenunion.New(chain...), nil
}

// newAuthenticator authenticates as kube-apiserver does: client
// certificates signed by clientCA (the user is the certificate's CN, its
// groups its O; none if clientCA is nil), then bearer tokens; every
// authenticated user is in system:authenticated. A request without
// credentials is system:anonymous if anonymous is set (as with
// kube-apiserver's --anonymous-auth=true), else a 401.
func newAuthenticator(clientCA dynamiccertificates.CAContentProvider, tokens authenticator.Token, allowAnonymous bool) authenticator.Request {
	var chain []authenticator.Request
	if clientCA != nil {
		chain = append(chain, x509request.NewDynamic(clientCA.VerifyOptions, x509request.CommonNameUserConversion))
	}
	authenticated := group.NewAuthenticatedGroupAdder(union.New(append(chain, bearertoken.New(tokens))...))
	if !allowAnonymous {
		return authenticated
	}
	// RBAC answers system:anonymous: 403 but for the public paths. Wrong
	// credentials are a 401.
	return union.NewFailOnError(authenticated, anonymous.NewAuthenticator(nil))
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

// MarkUsed merge-patches the day into secret's labels (with its UID as a
// precondition), as upstream's legacy token tracking does.
func (l clientLookup) MarkUsed(ctx context.Context, secret *corev1.Secret, day string) {
	patch, err := json.Marshal(applycorev1.Secret(secret.Name, secret.Namespace).WithUID(secret.UID).WithLabels(map[string]string{auth.LastUsedLabelKey: day}))
	if err == nil {
		_, err = l.client.CoreV1().Secrets(secret.Namespace).Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Labelling a legacy service account token with its last use", "secret", klog.KObj(secret))
	}
}

// Authorization modes (--authorization-mode, a comma-separated list).
const (
	AuthorizationRBAC        = "RBAC"
	AuthorizationAlwaysAllow = "AlwaysAllow"
	AuthorizationAlwaysDeny  = "AlwaysDeny"
	// AuthorizationNode is accepted in the list, but authorizes nothing
	// of its own (upstream's Node authorizer is not ported): a node's
	// requests get what the other modes allow it.
	AuthorizationNode = "Node"
)

// authorizationModes splits mode (kube-apiserver's --authorization-mode)
// into its modes, and refuses what kube-apiserver refuses and the modes
// this server lacks.
func authorizationModes(mode string) ([]string, error) {
	modes := strings.Split(mode, ",")
	seen := map[string]bool{}
	for _, m := range modes {
		switch m {
		case AuthorizationRBAC, AuthorizationAlwaysAllow, AuthorizationAlwaysDeny, AuthorizationNode:
		case "ABAC", "Webhook":
			return nil, fmt.Errorf("--authorization-mode=%s: %s authorization is not supported by miniapiserver (supported: %s)", mode, m, supportedModes)
		case "":
			return nil, fmt.Errorf("--authorization-mode=%s: at least one authorization mode must be passed", mode)
		default:
			return nil, fmt.Errorf("--authorization-mode=%s: authorization mode %s is not a valid mode (supported: %s)", mode, m, supportedModes)
		}
		if seen[m] {
			return nil, fmt.Errorf("--authorization-mode=%s: has mode specified more than once: %s", mode, m)
		}
		seen[m] = true
	}
	return modes, nil
}

var supportedModes = strings.Join([]string{AuthorizationAlwaysAllow, AuthorizationAlwaysDeny, AuthorizationNode, AuthorizationRBAC}, ", ")

// newAuthorizer authorizes as kube-apiserver with mode (validated by
// authorizationModes): members of system:masters may do anything, then
// each mode in turn has its say: RBAC what the RBAC objects in factory's
// informers allow (and everyone the public paths), AlwaysAllow everything,
// AlwaysDeny nothing, Node nothing of its own. The rule resolver is
// RBAC's, or AlwaysAllow's, or one that finds no rules.
func newAuthorizer(mode string, factory informers.SharedInformerFactory) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	modes, err := authorizationModes(mode)
	if err != nil {
		return nil, nil, err
	}
	chain := []authorizerunion.NamedAuthorizer{{AuthorizerName: "system:masters", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)}}
	var resolvers []authorizer.RuleResolver
	for _, m := range modes {
		switch m {
		case AuthorizationAlwaysAllow:
			a := authorizerfactory.NewAlwaysAllowAuthorizer()
			chain, resolvers = append(chain, authorizerunion.NamedAuthorizer{AuthorizerName: m, Authorizer: a}), append(resolvers, a)
		case AuthorizationAlwaysDeny:
			a := authorizerfactory.NewAlwaysDenyAuthorizer()
			chain, resolvers = append(chain, authorizerunion.NamedAuthorizer{AuthorizerName: m, Authorizer: a}), append(resolvers, a)
		case AuthorizationRBAC:
			r, err := newRBAC(factory)
			if err != nil {
				return nil, nil, err
			}
			chain = append(chain, authorizerunion.NamedAuthorizer{AuthorizerName: "public-info", Authorizer: publicInfo{}},
				authorizerunion.NamedAuthorizer{AuthorizerName: m, Authorizer: r})
			resolvers = append(resolvers, r)
		}
	}
	a, err := authorizerunion.New(chain...)
	if err != nil {
		return nil, nil, err
	}
	return a, authorizerunion.NewRuleResolvers(resolvers...), nil
}

// newRBAC is the RBAC authorizer over factory's informers.
func newRBAC(factory informers.SharedInformerFactory) (*auth.RBAC, error) {
	rbac := factory.Rbac().V1()
	bindings, clusterBindings := rbac.RoleBindings().Informer(), rbac.ClusterRoleBindings().Informer()
	for _, i := range []cache.SharedIndexInformer{bindings, clusterBindings} {
		if err := i.AddIndexers(auth.BindingIndexers); err != nil {
			return nil, err
		}
	}
	return &auth.RBAC{
		Roles:               rbac.Roles().Lister(),
		ClusterRoles:        rbac.ClusterRoles().Lister(),
		RoleBindings:        bindings.GetIndexer(),
		ClusterRoleBindings: clusterBindings.GetIndexer(),
	}, nil
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
