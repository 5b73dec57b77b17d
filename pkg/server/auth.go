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
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/klog/v2"
)

// publicPaths are served to anonymous clients; everything else needs the
// admin token (or the loopback token) and answers 401 without it.
var publicPaths = []string{"/livez", "/readyz", "/healthz", "/version"}

// newAuthenticator authenticates the admin bearer token as a cluster admin and
// lets anonymous requests through to the public paths only.
func newAuthenticator(adminToken string) authenticator.Request {
	tokens := bearertoken.New(authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		if subtle.ConstantTimeCompare([]byte(token), []byte(adminToken)) != 1 {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{
			Name:   "admin",
			Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated},
		}}, true, nil
	}))
	return authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		resp, ok, err := tokens.AuthenticateRequest(req)
		if ok || err != nil || !isPublic(req.URL.Path) {
			return resp, ok, err
		}
		return &authenticator.Response{User: &user.DefaultInfo{
			Name:   user.Anonymous,
			Groups: []string{user.AllUnauthenticated},
		}}, true, nil
	})
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
