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

package apis

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/auth"
)

// Identity is what the APIs that authenticate and authorize answer with:
// the reviews, service account tokens, RBAC's escalation checks and the
// pods' streams. All of it is required.
type Identity struct {
	// Authorizer and Rules answer SubjectAccessReviews and
	// SelfSubjectRulesReviews, and check RBAC writes for escalation.
	Authorizer authorizer.Authorizer
	Rules      authorizer.RuleResolver
	// Tokens authenticates bearer tokens (TokenReview).
	Tokens authenticator.Token
	// ServiceAccounts issues TokenRequest's tokens.
	ServiceAccounts *auth.ServiceAccountTokens
}

// issue is a serviceaccount.IssueFunc over id.ServiceAccounts.
func (id Identity) issue(sa *corev1.ServiceAccount, audiences []string, ttl time.Duration, kind, name string, uid types.UID) (string, time.Time, error) {
	var binding *auth.Binding
	if kind != "" {
		binding = &auth.Binding{Kind: kind, Name: name, UID: string(uid)}
	}
	return id.ServiceAccounts.Issue(sa, audiences, ttl, binding)
}
