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
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Legacy tokens are the secret-based ones kube-controller-manager's token
// controller signs (with the key of its
// --service-account-private-key-file, one of --service-account-key-file's
// here) into kubernetes.io/service-account-token Secrets: kube-apiserver
// takes them from this issuer whatever its own, as long as the Secret
// still holds the token (k8s.io/kubernetes pkg/serviceaccount/legacy.go).
const (
	LegacyIssuer = "kubernetes/serviceaccount"
	// LastUsedLabelKey marks the day a legacy token was last used, for
	// kube-controller-manager's cleaner of unused ones.
	LastUsedLabelKey = "kubernetes.io/legacy-token-last-used"
	// InvalidSinceLabelKey marks a legacy token the cleaner invalidated.
	InvalidSinceLabelKey = "kubernetes.io/legacy-token-invalid-since"
)

type legacyClaims struct {
	jwt.RegisteredClaims
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
}

// authenticateLegacy authenticates a legacy token, as upstream's
// legacyValidator: its claims name the account, its Secret (not being
// deleted, not invalidated) holds exactly this token, its account is
// there with the UID it names; the Secret is then labelled with the day
// of use. It has no audiences of its own: the API's.
func (t *ServiceAccountTokens) authenticateLegacy(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	var c legacyClaims
	if _, err := jwt.ParseWithClaims(token, &c, t.verificationKey, jwt.WithValidMethods(validMethods), jwt.WithTimeFunc(t.now)); err != nil {
		return nil, false, err
	}
	for _, claim := range []struct{ name, value string }{
		{"sub", c.Subject}, {"namespace", c.Namespace}, {"secretName", c.SecretName},
		{"serviceAccountName", c.ServiceAccountName}, {"serviceAccountUID", c.ServiceAccountUID},
	} {
		if claim.value == "" {
			return nil, false, fmt.Errorf("%s claim is missing", claim.name)
		}
	}
	if ns, name, err := serviceaccount.SplitUsername(c.Subject); err != nil || ns != c.Namespace || name != c.ServiceAccountName {
		return nil, false, errors.New("sub claim is invalid")
	}
	// A legacy token names no audience: it has the API's.
	matched, requested := t.matchAudiences(ctx, t.Audiences)
	if len(matched) == 0 && len(t.Audiences) > 0 {
		return nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", t.Audiences, requested)
	}
	secret, err := t.Lookup.Secret(ctx, c.Namespace, c.SecretName)
	if err != nil || secret.DeletionTimestamp != nil {
		return nil, false, errors.New("Token has been invalidated") //nolint:staticcheck // upstream's message
	}
	if subtle.ConstantTimeCompare(secret.Data[corev1.ServiceAccountTokenKey], []byte(token)) == 0 {
		return nil, false, errors.New("Token does not match server's copy") //nolint:staticcheck // upstream's message
	}
	sa, err := t.Lookup.ServiceAccount(ctx, c.Namespace, c.ServiceAccountName)
	if err != nil {
		return nil, false, err
	}
	if sa.DeletionTimestamp != nil {
		return nil, false, fmt.Errorf("ServiceAccount %s/%s has been deleted", c.Namespace, c.ServiceAccountName)
	}
	if string(sa.UID) != c.ServiceAccountUID {
		return nil, false, fmt.Errorf("ServiceAccount UID (%s) does not match claim (%s)", sa.UID, c.ServiceAccountUID)
	}
	if secret.Labels[InvalidSinceLabelKey] != "" {
		t.markUsed(ctx, secret)
		return nil, false, fmt.Errorf("the token in secret %s/%s for service account %s/%s has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token",
			c.Namespace, c.SecretName, c.Namespace, c.ServiceAccountName, InvalidSinceLabelKey)
	}
	t.markUsed(ctx, secret)
	return &authenticator.Response{
		Audiences: matched,
		User: &user.DefaultInfo{
			Name:   serviceaccount.MakeUsername(c.Namespace, c.ServiceAccountName),
			UID:    c.ServiceAccountUID,
			Groups: serviceaccount.MakeGroupNames(c.Namespace),
		},
	}, true, nil
}

// markUsed labels secret with today's date (UTC) unless it has today's or
// tomorrow's already; a failure to is only logged, as upstream's.
func (t *ServiceAccountTokens) markUsed(ctx context.Context, secret *corev1.Secret) {
	now := t.now().UTC()
	today := now.Format(time.DateOnly)
	if last := secret.Labels[LastUsedLabelKey]; last == today || last == now.AddDate(0, 0, 1).Format(time.DateOnly) {
		return
	}
	t.Lookup.MarkUsed(ctx, secret, today)
}
