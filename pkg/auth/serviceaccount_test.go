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
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// objects is a Lookup over a few objects.
type objects struct {
	sas     map[string]*corev1.ServiceAccount
	pods    map[string]*corev1.Pod
	secrets map[string]*corev1.Secret
	// used records MarkUsed's calls, "namespace/name day".
	used *[]string
}

func get[T any](m map[string]T, resource, ns, name string) (T, error) {
	if obj, ok := m[ns+"/"+name]; ok {
		return obj, nil
	}
	var zero T
	return zero, apierrors.NewNotFound(corev1.Resource(resource), name)
}

func (o objects) ServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return get(o.sas, "serviceaccounts", ns, name)
}
func (o objects) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	return get(o.pods, "pods", ns, name)
}
func (o objects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	return get(o.secrets, "secrets", ns, name)
}
func (o objects) MarkUsed(_ context.Context, secret *corev1.Secret, day string) {
	if o.used != nil {
		*o.used = append(*o.used, secret.Namespace+"/"+secret.Name+" "+day)
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestServiceAccountTokens(t *testing.T) {
	robot := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "robot", UID: "sa-1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "pod-1"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	issuer := &ServiceAccountTokens{Key: newKey(t), Issuers: []string{"https://kubernetes.default.svc.cluster.local"}, Audiences: []string{"api"}, Now: clock}
	token := func(audiences []string, binding *Binding) string {
		tok, _, err := issuer.Issue(robot, audiences, time.Hour, binding)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaToken, _, err := (&ServiceAccountTokens{Key: rsaKey, Issuers: issuer.Issuers, Now: clock}).Issue(robot, []string{"api"}, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := objects{sas: map[string]*corev1.ServiceAccount{"ns/robot": robot}, pods: map[string]*corev1.Pod{"ns/web": pod}}
	for _, tc := range []struct {
		name    string
		checker *ServiceAccountTokens
		token   string
		ctx     context.Context
		want    bool // authenticated
		wantErr bool
	}{
		{name: "valid", token: token([]string{"api"}, nil), want: true},
		{name: "bound to a live pod", token: token([]string{"api"}, &Binding{Kind: "Pod", Name: "web", UID: "pod-1"}), want: true},
		{name: "bound to a deleted pod", token: token([]string{"api"}, &Binding{Kind: "Pod", Name: "gone", UID: "pod-2"}), wantErr: true},
		{name: "bound to a pod of the same name, another UID", token: token([]string{"api"}, &Binding{Kind: "Pod", Name: "web", UID: "pod-0"}), wantErr: true},
		{name: "another audience", token: token([]string{"vault"}, nil), wantErr: true},
		{name: "the audience the request asks for", token: token([]string{"vault"}, nil), ctx: authenticator.WithAudiences(context.Background(), authenticator.Audiences{"vault"}), want: true},
		{name: "not a JWT", token: "admin-token"},
		{name: "another key", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: newKey(t), Issuers: issuer.Issuers, Audiences: []string{"api"}, Lookup: live, Now: clock}},
		{name: "expired", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: issuer.Key, Issuers: issuer.Issuers, Audiences: []string{"api"}, Lookup: live,
			Now: func() time.Time { return now.Add(2 * time.Hour) }}, wantErr: true},
		{name: "its service account deleted", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: issuer.Key, Issuers: issuer.Issuers, Audiences: []string{"api"}, Lookup: objects{}, Now: clock}, wantErr: true},
		{name: "another issuer", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: issuer.Key, Issuers: []string{"https://other"}, Audiences: []string{"api"}, Lookup: live, Now: clock}},
		{name: "one of the issuers", token: token([]string{"api"}, nil), checker: &ServiceAccountTokens{Key: issuer.Key, Issuers: []string{"https://other", issuer.Issuers[0]}, Audiences: []string{"api"}, Lookup: live, Now: clock}, want: true},
		{name: "checked by one of the public keys", token: token([]string{"api"}, nil), want: true,
			checker: &ServiceAccountTokens{Key: newKey(t), PublicKeys: []crypto.PublicKey{rsaKey.Public(), newKey(t).Public(), issuer.Key.Public()}, Issuers: issuer.Issuers, Audiences: []string{"api"}, Lookup: live, Now: clock}},
		{name: "signed with an RSA key", token: rsaToken, want: true,
			checker: &ServiceAccountTokens{Key: issuer.Key, PublicKeys: []crypto.PublicKey{issuer.Key.Public(), rsaKey.Public()}, Issuers: issuer.Issuers, Audiences: []string{"api"}, Lookup: live, Now: clock}},
		{name: "signed with an RSA key not among the public keys", token: rsaToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checker := tc.checker
			if checker == nil {
				checker = &ServiceAccountTokens{Key: issuer.Key, Issuers: issuer.Issuers, Audiences: issuer.Audiences, Lookup: live, Now: clock}
			}
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			resp, ok, err := checker.AuthenticateToken(ctx, tc.token)
			if ok != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("got %t, %v; want %t, error %t", ok, err, tc.want, tc.wantErr)
			}
			if ok {
				u := resp.User
				if u.GetName() != "system:serviceaccount:ns:robot" || u.GetUID() != "sa-1" || len(u.GetGroups()) != 2 || u.GetGroups()[1] != "system:serviceaccounts:ns" {
					t.Errorf("user: got %s %s %v", u.GetName(), u.GetUID(), u.GetGroups())
				}
			}
		})
	}
}

// TestServiceAccountTokenHeader: upstream's algorithm by key kind and size,
// and its key ID.
func TestServiceAccountTokenHeader(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	robot := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "robot", UID: "sa-1"}}
	for _, tc := range []struct {
		name    string
		key     crypto.Signer
		wantAlg string
	}{
		{name: "RSA", key: rsaKey, wantAlg: "RS256"},
		{name: "P-256", key: newKey(t), wantAlg: "ES256"},
		{name: "P-384", key: p384, wantAlg: "ES384"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, _, err := (&ServiceAccountTokens{Key: tc.key, Issuers: []string{"https://issuer"}}).Issue(robot, []string{"api"}, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			header, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
			if err != nil {
				t.Fatal(err)
			}
			var h struct{ Alg, Kid string }
			if err := json.Unmarshal(header, &h); err != nil {
				t.Fatal(err)
			}
			der, err := x509.MarshalPKIXPublicKey(tc.key.Public())
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(der)
			if want := base64.RawURLEncoding.EncodeToString(sum[:]); h.Alg != tc.wantAlg || h.Kid != want {
				t.Errorf("got alg %s kid %s, want %s %s", h.Alg, h.Kid, tc.wantAlg, want)
			}
		})
	}
}
