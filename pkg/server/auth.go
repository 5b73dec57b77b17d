package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/user"
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
