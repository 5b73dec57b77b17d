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

package auth

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authorizerunion "k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

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

// AuthorizationModes splits mode (kube-apiserver's --authorization-mode)
// into its modes, and refuses what kube-apiserver refuses and the modes
// this server lacks.
func AuthorizationModes(mode string) ([]string, error) {
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

// NewAuthorizer authorizes as kube-apiserver with mode (validated by
// AuthorizationModes): members of system:masters may do anything, then
// each mode in turn has its say: RBAC what the RBAC objects in factory's
// informers allow (and everyone the public paths), AlwaysAllow everything,
// AlwaysDeny nothing, Node nothing of its own. The rule resolver is
// RBAC's, or AlwaysAllow's, or one that finds no rules.
func NewAuthorizer(mode string, factory informers.SharedInformerFactory) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	modes, err := AuthorizationModes(mode)
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
			r, err := NewRBAC(factory)
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

// NewRBAC is the RBAC authorizer over factory's informers.
func NewRBAC(factory informers.SharedInformerFactory) (*RBAC, error) {
	rbac := factory.Rbac().V1()
	bindings, clusterBindings := rbac.RoleBindings().Informer(), rbac.ClusterRoleBindings().Informer()
	for _, i := range []cache.SharedIndexInformer{bindings, clusterBindings} {
		if err := i.AddIndexers(BindingIndexers); err != nil {
			return nil, err
		}
	}
	return &RBAC{
		Roles:               rbac.Roles().Lister(),
		ClusterRoles:        rbac.ClusterRoles().Lister(),
		RoleBindings:        bindings.GetIndexer(),
		ClusterRoleBindings: clusterBindings.GetIndexer(),
	}, nil
}

// publicPaths are served to anonymous clients (system:public-info-viewer's
// paths); everything else is forbidden to them.
var publicPaths = []string{"/livez", "/readyz", "/healthz", "/version"}

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
