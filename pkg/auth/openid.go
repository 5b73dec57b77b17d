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
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
)

// OpenIDConfigPath and JWKSPath are where kube-apiserver serves its
// service account issuer's discovery documents.
const (
	OpenIDConfigPath = "/.well-known/openid-configuration"
	JWKSPath         = "/openid/v1/jwks"
)

// OpenIDMetadata are the service account issuer's discovery documents,
// as kube-apiserver serves them (a port of k8s.io/kubernetes'
// pkg/serviceaccount/openidmetadata.go, without go-jose).
type OpenIDMetadata struct {
	issuer, jwksURI string
	keys            func() []crypto.PublicKey
}

// OpenIDMetadata validates t's issuer and jwksURI as upstream does, and
// returns the documents of t's first issuer, with the keys that check its
// tokens. An empty jwksURI is the JWKS path at externalAddress (host:port).
func (t *ServiceAccountTokens) OpenIDMetadata(jwksURI, externalAddress string) (*OpenIDMetadata, error) {
	if len(t.Issuers) == 0 || t.Issuers[0] == "" {
		return nil, errors.New("empty issuer URL")
	}
	issuer := t.Issuers[0]
	iss, err := url.Parse(issuer)
	switch {
	case err != nil:
		return nil, err
	case iss.Scheme != "https":
		return nil, fmt.Errorf("issuer URL must use https scheme, got: %s", issuer)
	case iss.RawQuery != "":
		return nil, fmt.Errorf("issuer URL may not include a query, got: %s", issuer)
	case iss.Fragment != "":
		return nil, fmt.Errorf("issuer URL may not include a fragment, got: %s", issuer)
	}
	if jwksURI == "" {
		if externalAddress == "" {
			return nil, errors.New("either the JWKS URI or the default external address, or both, must be set")
		}
		jwksURI = (&url.URL{Scheme: "https", Host: externalAddress, Path: JWKSPath}).String()
	} else if u, err := url.Parse(jwksURI); err != nil {
		return nil, err
	} else if u.Scheme != "https" {
		return nil, fmt.Errorf("jwksURI requires https scheme, parsed as: %v", u.String())
	}
	m := &OpenIDMetadata{issuer: issuer, jwksURI: jwksURI, keys: t.publicKeys}
	_, err = m.keySet()
	return m, err
}

// Config is the OpenID configuration (the "OIDC discovery doc").
func (m *OpenIDMetadata) Config() ([]byte, error) {
	keys, err := m.keySet()
	if err != nil {
		return nil, err
	}
	var algs []string
	for _, k := range keys.Keys {
		if !slices.Contains(algs, k.Alg) {
			algs = append(algs, k.Alg)
		}
	}
	slices.Sort(algs)
	return json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		SubjectTypes  []string `json:"subject_types_supported"`
		SigningAlgs   []string `json:"id_token_signing_alg_values_supported"`
	}{m.issuer, m.jwksURI, []string{"id_token"}, []string{"public"}, algs})
}

// KeySet is the JSON Web Key Set of the keys that check the tokens.
func (m *OpenIDMetadata) KeySet() ([]byte, error) {
	keys, err := m.keySet()
	if err != nil {
		return nil, err
	}
	return json.Marshal(keys)
}

// jwk is a public JSON Web Key, its fields in go-jose's order.
type jwk struct {
	Use string `json:"use,omitempty"`
	Kty string `json:"kty,omitempty"`
	Kid string `json:"kid,omitempty"`
	Crv string `json:"crv,omitempty"`
	Alg string `json:"alg,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
}

type jwks struct {
	Keys []jwk `json:"keys"`
}

func (m *OpenIDMetadata) keySet() (*jwks, error) {
	keys := m.keys()
	if len(keys) == 0 {
		return nil, errors.New("no keys provided for validating keyset")
	}
	set := &jwks{}
	for i, key := range keys {
		k, err := publicJWK(key)
		if err != nil {
			return nil, fmt.Errorf("error constructing JWK for key #%d: %w", i, err)
		}
		set.Keys = append(set.Keys, k)
	}
	return set, nil
}

// publicJWK is key as a JSON Web Key, as go-jose encodes it.
func publicJWK(key crypto.PublicKey) (jwk, error) {
	method, err := signingMethod(key)
	if err != nil {
		return jwk{}, err
	}
	kid, err := keyID(key)
	if err != nil {
		return jwk{}, err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	k := jwk{Use: "sig", Kid: kid, Alg: method.Alg()}
	switch key := key.(type) {
	case *rsa.PublicKey:
		k.Kty, k.N, k.E = "RSA", b64(key.N.Bytes()), b64(big.NewInt(int64(key.E)).Bytes())
	case *ecdsa.PublicKey:
		point, err := key.Bytes() // uncompressed: 4, then x and y of the curve's size
		if err != nil {
			return jwk{}, err
		}
		size := (len(point) - 1) / 2
		k.Kty, k.Crv, k.X, k.Y = "EC", key.Curve.Params().Name, b64(point[1:1+size]), b64(point[1+size:])
	}
	return k, nil
}
