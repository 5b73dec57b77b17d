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
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Service account tokens are kube-apiserver's bound tokens (TokenRequest):
// JWTs signed with the server's key (RS256 for an RSA key, ES256, ES384 or
// ES512 for an ECDSA key by its curve, as upstream), with upstream's claims
// and key ID, whose subject is system:serviceaccount:<namespace>:<name>.

// ServiceAccountTokens issues and checks service account tokens.
type ServiceAccountTokens struct {
	// Key signs the tokens (kube-apiserver's
	// --service-account-signing-key-file): an *rsa.PrivateKey or an
	// *ecdsa.PrivateKey.
	Key crypto.Signer
	// PublicKeys check them (--service-account-key-file); none: Key's
	// public half.
	PublicKeys []crypto.PublicKey
	// PeerKeys, if set, are more that check them: the keys of other
	// servers on the etcd, so that their tokens authenticate here too.
	PeerKeys func() []crypto.PublicKey
	// Issuers are the issuers a token may come from
	// (--service-account-issuer, repeated); the first is the iss of the
	// tokens Issue makes.
	Issuers []string
	// Audiences are the API's audiences (--api-audiences): a token for
	// none of them does not authenticate to the API.
	Audiences []string
	// Lookup finds the objects a token names: a token whose service
	// account, pod or secret is gone, or is another object of the same
	// name (another UID), does not authenticate.
	Lookup Lookup
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Lookup reads the objects tokens refer to; a missing one is a NotFound error.
type Lookup interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	// MarkUsed labels secret, a legacy token's, with the day it was used
	// (LastUsedLabelKey), logging a failure.
	MarkUsed(ctx context.Context, secret *corev1.Secret, day string)
}

// Binding is the object a token is bound to: it stops authenticating
// when that object is deleted.
type Binding struct {
	Kind      string // Pod or Secret
	Name, UID string
}

// claims are upstream's: the registered ones and "kubernetes.io".
type claims struct {
	jwt.RegisteredClaims
	Kubernetes kubernetesClaims `json:"kubernetes.io,omitempty"`
}

type kubernetesClaims struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount ref    `json:"serviceaccount,omitempty"`
	Pod            *ref   `json:"pod,omitempty"`
	Secret         *ref   `json:"secret,omitempty"`
}

type ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

func (t *ServiceAccountTokens) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Issue returns a token for sa, for audiences, valid for ttl, bound to
// binding if it is not nil, and when it expires.
func (t *ServiceAccountTokens) Issue(sa *corev1.ServiceAccount, audiences []string, ttl time.Duration, binding *Binding) (string, time.Time, error) {
	now := t.now().Truncate(time.Second)
	exp := now.Add(ttl)
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: t.Issuers[0], Subject: serviceaccount.MakeUsername(sa.Namespace, sa.Name), Audience: audiences,
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
			ID: uuid.NewString(),
		},
		Kubernetes: kubernetesClaims{Namespace: sa.Namespace, ServiceAccount: ref{Name: sa.Name, UID: string(sa.UID)}},
	}
	if binding != nil {
		r := &ref{Name: binding.Name, UID: binding.UID}
		switch binding.Kind {
		case "Pod":
			c.Kubernetes.Pod = r
		case "Secret":
			c.Kubernetes.Secret = r
		default:
			return "", time.Time{}, fmt.Errorf("a token cannot be bound to a %s", binding.Kind)
		}
	}
	method, err := signingMethod(t.Key.Public())
	if err != nil {
		return "", time.Time{}, err
	}
	kid, err := keyID(t.Key.Public())
	if err != nil {
		return "", time.Time{}, err
	}
	j := jwt.NewWithClaims(method, c)
	j.Header["kid"] = kid
	token, err := j.SignedString(t.Key)
	return token, exp, err
}

// signingMethod is the JWT algorithm upstream signs with a key of key's
// kind and size.
func signingMethod(key crypto.PublicKey) (jwt.SigningMethod, error) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return jwt.SigningMethodRS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return jwt.SigningMethodES256, nil
		case 384:
			return jwt.SigningMethodES384, nil
		case 521:
			return jwt.SigningMethodES512, nil
		}
		return nil, fmt.Errorf("unsupported ECDSA curve %s", k.Curve.Params().Name)
	}
	return nil, fmt.Errorf("unsupported service account signing key %T: want RSA or ECDSA", key)
}

// keyID is upstream's key ID of key: the unpadded base64url SHA-256 of its
// PKIX DER form.
func keyID(key crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// publicKeys are the keys that check tokens.
func (t *ServiceAccountTokens) publicKeys() []crypto.PublicKey {
	var peers []crypto.PublicKey
	if t.PeerKeys != nil {
		peers = t.PeerKeys()
	}
	return append(t.OwnKeys(), peers...)
}

// OwnKeys are this server's keys that check tokens: PublicKeys, or Key's
// public half.
func (t *ServiceAccountTokens) OwnKeys() []crypto.PublicKey {
	if len(t.PublicKeys) > 0 {
		return slices.Clone(t.PublicKeys)
	}
	return []crypto.PublicKey{t.Key.Public()}
}

// verificationKey finds the public key of a token's algorithm that checks
// its signature: each of them, as upstream tries each of its keys.
func (t *ServiceAccountTokens) verificationKey(token *jwt.Token) (any, error) {
	var keys jwt.VerificationKeySet
	for _, k := range t.publicKeys() {
		if m, err := signingMethod(k); err == nil && m.Alg() == token.Method.Alg() {
			keys.Keys = append(keys.Keys, k)
		}
	}
	if len(keys.Keys) == 0 {
		return nil, jwt.ErrTokenUnverifiable
	}
	return keys, nil
}

var _ authenticator.Token = (*ServiceAccountTokens)(nil)

// validMethods are the algorithms of the keys signingMethod takes.
var validMethods = []string{"RS256", "ES256", "ES384", "ES512"}

// errNotOurs: the token is no JWT of this issuer; other authenticators may take it.
var errNotOurs = errors.New("not a service account token of this server")

// AuthenticateToken implements authenticator.Token: a token this server
// issued, for one of the request's audiences (the API's by default), not
// expired, whose service account (and bound object) still exist.
func (t *ServiceAccountTokens) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	var c claims
	parsed, err := jwt.ParseWithClaims(token, &c, t.verificationKey, jwt.WithValidMethods(validMethods), jwt.WithTimeFunc(t.now), jwt.WithLeeway(time.Minute))
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed) || errors.Is(err, jwt.ErrTokenSignatureInvalid) || errors.Is(err, jwt.ErrTokenUnverifiable):
		return nil, false, nil // someone else's token, or none at all
	case c.Issuer == LegacyIssuer && err == nil:
		return t.authenticateLegacy(ctx, token)
	case !slices.Contains(t.Issuers, c.Issuer):
		return nil, false, nil // another issuer's
	case err != nil:
		return nil, false, err // ours, but expired or not yet valid
	case !parsed.Valid:
		return nil, false, errNotOurs
	}
	matched, _ := t.matchAudiences(ctx, c.Audience)
	if len(matched) == 0 {
		return nil, false, errors.New("token audiences do not match the API's")
	}
	k := c.Kubernetes
	sa, err := t.Lookup.ServiceAccount(ctx, k.Namespace, k.ServiceAccount.Name)
	if err := gone("service account", k.Namespace, k.ServiceAccount, sa, err); err != nil {
		return nil, false, err
	}
	extra := map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=" + c.ID}}
	if k.Pod != nil {
		pod, err := t.Lookup.Pod(ctx, k.Namespace, k.Pod.Name)
		if err := gone("pod", k.Namespace, *k.Pod, pod, err); err != nil {
			return nil, false, err
		}
		extra["authentication.kubernetes.io/pod-name"] = []string{k.Pod.Name}
		extra["authentication.kubernetes.io/pod-uid"] = []string{k.Pod.UID}
	}
	if k.Secret != nil {
		secret, err := t.Lookup.Secret(ctx, k.Namespace, k.Secret.Name)
		if err := gone("secret", k.Namespace, *k.Secret, secret, err); err != nil {
			return nil, false, err
		}
	}
	return &authenticator.Response{
		Audiences: matched,
		User: &user.DefaultInfo{
			Name:   serviceaccount.MakeUsername(k.Namespace, k.ServiceAccount.Name),
			UID:    k.ServiceAccount.UID,
			Groups: serviceaccount.MakeGroupNames(k.Namespace),
			Extra:  extra,
		},
	}, true, nil
}

// matchAudiences returns those of a token's audiences the request asks
// for (the API's, unless the request names others), never nil, and the
// audiences asked for.
func (t *ServiceAccountTokens) matchAudiences(ctx context.Context, tokenAudiences []string) (matched, requested []string) {
	requested, ok := authenticator.AudiencesFrom(ctx)
	if !ok || len(requested) == 0 {
		requested = t.Audiences
	}
	matched = []string{}
	for _, a := range tokenAudiences {
		if slices.Contains(requested, a) {
			matched = append(matched, a)
		}
	}
	return matched, requested
}

// gone returns the error that makes a token invalid when the object it
// names (found as obj, or err) is not there, or is another of its name.
func gone[T interface{ GetUID() types.UID }](what, namespace string, want ref, obj T, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s has been deleted", what, namespace, want.Name)
	}
	if err != nil {
		return fmt.Errorf("looking up %s %s/%s: %w", what, namespace, want.Name, err)
	}
	if string(obj.GetUID()) != want.UID {
		return fmt.Errorf("%s UID (%s) does not match claim (%s)", what, obj.GetUID(), want.UID)
	}
	return nil
}
