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
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	tokenunion "k8s.io/apiserver/pkg/authentication/token/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// NewTokenAuthenticator authenticates the bearer tokens kube-apiserver
// would, in its order: the tokens of tokenFile (upstream's
// --token-auth-file CSV; "" for none), service account tokens, and the
// admin token, if any (a member of system:masters).
func NewTokenAuthenticator(adminToken, tokenFile string, serviceAccounts *ServiceAccountTokens) (authenticator.Token, error) {
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

// NewAuthenticator authenticates as kube-apiserver does: a front proxy's
// requests for its users, with requestHeader (if set: its client
// certificate, the user in its headers), then client certificates signed
// by clientCA (the user is the certificate's CN, its groups its O; none if
// clientCA is nil), then bearer tokens; every authenticated user is in
// system:authenticated. A request without credentials is system:anonymous
// if anonymous is set (as with kube-apiserver's --anonymous-auth=true),
// else a 401.
func NewAuthenticator(clientCA dynamiccertificates.CAContentProvider, requestHeader *authenticatorfactory.RequestHeaderConfig, tokens authenticator.Token, allowAnonymous bool) authenticator.Request {
	var chain []authenticator.Request
	if rh := requestHeader; rh != nil {
		chain = append(chain, headerrequest.NewDynamicVerifyOptionsSecure(rh.CAContentProvider.VerifyOptions, rh.AllowedClientNames,
			rh.UsernameHeaders, rh.UIDHeaders, rh.GroupHeaders, rh.ExtraHeaderPrefixes))
	}
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

// ClientLookup finds the objects service account tokens name through the
// server's own (loopback) client.
type ClientLookup struct {
	Client kubernetes.Interface
}

func (l ClientLookup) ServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return l.Client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
}

func (l ClientLookup) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	return l.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
}

func (l ClientLookup) Secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	return l.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// MarkUsed merge-patches the day into secret's labels (with its UID as a
// precondition), as upstream's legacy token tracking does.
func (l ClientLookup) MarkUsed(ctx context.Context, secret *corev1.Secret, day string) {
	patch, err := json.Marshal(applycorev1.Secret(secret.Name, secret.Namespace).WithUID(secret.UID).WithLabels(map[string]string{LastUsedLabelKey: day}))
	if err == nil {
		_, err = l.Client.CoreV1().Secrets(secret.Namespace).Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Labelling a legacy service account token with its last use", "secret", klog.KObj(secret))
	}
}

// QuietFailures answers a request whose credentials auth rejects with an
// error (a wrong token, say) as one without credentials: 401 all the same,
// but logged at V(2) through the request's logger, which says which server
// (see withLogger). Upstream's authentication filter logs such an error at
// error level through klog's global logger: a client's mistake would read
// as a server fault, in the log of every test with a server running.
func QuietFailures(a authenticator.Request) authenticator.Request {
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := a.AuthenticateRequest(req)
		if err != nil && !ok {
			klog.FromContext(req.Context()).V(2).Info("Unable to authenticate the request", "err", err)
			return nil, false, nil
		}
		return resp, ok, err
	})
}
