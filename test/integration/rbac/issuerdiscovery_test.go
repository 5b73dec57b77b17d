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

package rbac

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/pkg/testserver"
)

// TestServiceAccountIssuerDiscovery: a service account reads the issuer's
// OpenID configuration and key set, as kube-apiserver serves them to
// service accounts (system:service-account-issuer-discovery), and a token
// of TokenRequest verifies with that key set and that issuer alone, as a
// relying party verifies it; an anonymous request is refused.
func TestServiceAccountIssuerDiscovery(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t)
	admin := kubernetes.NewForConfigOrDie(s.Config)
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "relying"}}
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asSA := rest.AnonymousClientConfig(s.Config)
	asSA.BearerToken = tr.Status.Token
	client := kubernetes.NewForConfigOrDie(asSA).Discovery().RESTClient()
	var config struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	raw, err := client.Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx)
	if err != nil || json.Unmarshal(raw, &config) != nil {
		t.Fatalf("the OpenID configuration: %v\n%s", err, raw)
	}
	if want := s.Config.Host + "/openid/v1/jwks"; config.JWKSURI != want || config.Issuer != "https://kubernetes.default.svc.cluster.local" || len(config.Algs) != 1 || config.Algs[0] != "ES256" {
		t.Errorf("the OpenID configuration: got %s, want the issuer, jwks_uri %s and ES256", raw, want)
	}
	var keys struct {
		Keys []struct{ Kid, Kty, Crv, Alg, X, Y string } `json:"keys"`
	}
	if raw, err = client.Get().AbsPath("/openid/v1/jwks").DoRaw(ctx); err != nil || json.Unmarshal(raw, &keys) != nil || len(keys.Keys) == 0 {
		t.Fatalf("the key set: %v\n%s", err, raw)
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(tr.Status.Token, claims, func(token *jwt.Token) (any, error) {
		for _, k := range keys.Keys {
			if k.Kid == token.Header["kid"] && k.Kty == "EC" && k.Crv == "P-256" {
				x, errX := base64.RawURLEncoding.DecodeString(k.X)
				y, errY := base64.RawURLEncoding.DecodeString(k.Y)
				if errX != nil || errY != nil {
					return nil, errors.Join(errX, errY)
				}
				return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
			}
		}
		return nil, jwt.ErrTokenUnverifiable
	}, jwt.WithIssuer(config.Issuer), jwt.WithValidMethods(config.Algs))
	if err != nil || claims["sub"] != "system:serviceaccount:default:relying" {
		t.Errorf("the token, verified with the key set: got %v, sub %v", err, claims["sub"])
	}

	anonymous := kubernetes.NewForConfigOrDie(rest.AnonymousClientConfig(s.Config)).Discovery().RESTClient()
	if err := anonymous.Get().AbsPath("/openid/v1/jwks").Do(ctx).Error(); !apierrors.IsForbidden(err) {
		t.Errorf("an anonymous GET of the key set: got %v, want 403", err)
	}
}
