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
	"slices"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLegacyTokens: a secret-based token of kube-controller-manager's
// token controller (signed with a key the server checks, issuer
// kubernetes/serviceaccount) authenticates while its Secret holds it and
// its account is the one it names, and marks the Secret used that day.
func TestLegacyTokens(t *testing.T) {
	key := newKey(t)
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	robot := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "robot", UID: "sa-1"}}
	sign := func(c legacyClaims) string {
		token, err := jwt.NewWithClaims(jwt.SigningMethodES256, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	claims := legacyClaims{RegisteredClaims: jwt.RegisteredClaims{Issuer: LegacyIssuer, Subject: "system:serviceaccount:ns:robot"},
		ServiceAccountName: "robot", ServiceAccountUID: "sa-1", SecretName: "robot-token", Namespace: "ns"}
	token := sign(claims)
	secret := func(data string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "robot-token", Labels: labels},
			Data: map[string][]byte{corev1.ServiceAccountTokenKey: []byte(data)}}
	}
	otherUID := claims
	otherUID.ServiceAccountUID = "sa-0"
	for _, tc := range []struct {
		name     string
		token    string
		secret   *corev1.Secret
		want     bool
		wantErr  bool
		wantUsed []string
	}{
		{name: "in its Secret", token: token, secret: secret(token, nil), want: true, wantUsed: []string{"ns/robot-token 2026-03-04"}},
		{name: "used today already", token: token, secret: secret(token, map[string]string{LastUsedLabelKey: "2026-03-04"}), want: true},
		{name: "its Secret holds another", token: token, secret: secret("other", nil), wantErr: true},
		{name: "its Secret deleted", token: token, wantErr: true},
		{name: "invalidated", token: token, secret: secret(token, map[string]string{InvalidSinceLabelKey: "2026-01-01"}), wantErr: true,
			wantUsed: []string{"ns/robot-token 2026-03-04"}},
		{name: "another account of that name", token: sign(otherUID), secret: secret(sign(otherUID), nil), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var used []string
			lookup := objects{sas: map[string]*corev1.ServiceAccount{"ns/robot": robot}, secrets: map[string]*corev1.Secret{}, used: &used}
			if tc.secret != nil {
				lookup.secrets["ns/robot-token"] = tc.secret
			}
			checker := &ServiceAccountTokens{Key: newKey(t), PublicKeys: []crypto.PublicKey{key.Public()}, Issuers: []string{"https://kubernetes.default.svc"},
				Audiences: []string{"api"}, Lookup: lookup, Now: func() time.Time { return now }}
			resp, ok, err := checker.AuthenticateToken(context.Background(), tc.token)
			if ok != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("got %t, %v; want %t, error %t", ok, err, tc.want, tc.wantErr)
			}
			if ok && (resp.User.GetName() != "system:serviceaccount:ns:robot" || !slices.Equal(resp.Audiences, []string{"api"})) {
				t.Errorf("user %s, audiences %v", resp.User.GetName(), resp.Audiences)
			}
			if !slices.Equal(used, tc.wantUsed) {
				t.Errorf("marked used: %v, want %v", used, tc.wantUsed)
			}
		})
	}
}
