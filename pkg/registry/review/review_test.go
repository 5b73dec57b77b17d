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

package review

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// bobReadsPods allows bob to get pods, and nothing else.
type bobReadsPods struct{}

func (bobReadsPods) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "bob" && a.IsResourceRequest() && a.GetVerb() == "get" && a.GetResource() == "pods" {
		return authorizer.DecisionAllow, "bob reads pods", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (b bobReadsPods) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(b.Authorize(ctx, a))
}

func (bobReadsPods) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func (bobReadsPods) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}, nil, false, nil
}

func TestSubjectAccessReview(t *testing.T) {
	sar := NewAuthorizationStorage(bobReadsPods{}, bobReadsPods{})["subjectaccessreviews"].(*creater)
	pods := &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "default"}
	for _, tc := range []struct {
		name        string
		spec        authorizationv1.SubjectAccessReviewSpec
		meta        metav1.ObjectMeta
		wantAllowed bool
		wantInvalid string
	}{
		{name: "allowed", spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: pods}, wantAllowed: true},
		{name: "another user", spec: authorizationv1.SubjectAccessReviewSpec{User: "eve", ResourceAttributes: pods}},
		{name: "no user or group", spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: pods}, wantInvalid: "spec.user: Invalid value: \"\": at least one of user or group must be specified"},
		{name: "no attributes", spec: authorizationv1.SubjectAccessReviewSpec{User: "bob"}, wantInvalid: "exactly one of nonResourceAttributes or resourceAttributes must be specified"},
		{name: "metadata", spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: pods}, meta: metav1.ObjectMeta{Name: "x"}, wantInvalid: "metadata: Invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sar.Create(context.Background(), &authorizationv1.SubjectAccessReview{ObjectMeta: tc.meta, Spec: tc.spec}, nil, nil)
			if tc.wantInvalid != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantInvalid) {
					t.Fatalf("got %v, want 422 with %q", err, tc.wantInvalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*authorizationv1.SubjectAccessReview).Status.Allowed; got != tc.wantAllowed {
				t.Errorf("allowed: got %t, want %t", got, tc.wantAllowed)
			}
		})
	}
}

func TestSelfReviews(t *testing.T) {
	storage := NewAuthorizationStorage(bobReadsPods{}, bobReadsPods{})
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "bob", Groups: []string{"devs", user.AllAuthenticated}})
	out, err := storage["selfsubjectaccessreviews"].(*creater).Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}}}, nil, nil)
	if err != nil || !out.(*authorizationv1.SelfSubjectAccessReview).Status.Allowed {
		t.Errorf("bob's self review: got %v, %v; want allowed", out, err)
	}
	out, err = storage["selfsubjectrulesreviews"].(*creater).Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []authorizationv1.ResourceRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}
	if diff := cmp.Diff(want, out.(*authorizationv1.SelfSubjectRulesReview).Status.ResourceRules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if _, err := storage["selfsubjectrulesreviews"].(*creater).Create(ctx, &authorizationv1.SelfSubjectRulesReview{}, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("a rules review without a namespace: got %v, want 400", err)
	}
	who, err := NewAuthenticationStorage(nil)["selfsubjectreviews"].(*creater).Create(ctx, &authenticationv1.SelfSubjectReview{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := who.(*authenticationv1.SelfSubjectReview).Status.UserInfo; got.Username != "bob" || len(got.Groups) != 2 {
		t.Errorf("whoami: got %+v, want bob in devs and system:authenticated", got)
	}
}

func TestTokenReview(t *testing.T) {
	tokens := authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if req.Header.Get("Authorization") == "Bearer good" {
			return &authenticator.Response{User: &user.DefaultInfo{Name: "carol", Groups: []string{"ops"}}}, true, nil
		}
		return nil, false, nil
	})
	tr := NewAuthenticationStorage(tokens)["tokenreviews"].(*creater)
	out, err := tr.Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "good"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := out.(*authenticationv1.TokenReview).Status; !st.Authenticated || st.User.Username != "carol" {
		t.Errorf("a good token: got %+v, want carol authenticated", st)
	}
	out, err = tr.Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "bad"}}, nil, nil)
	if err != nil || out.(*authenticationv1.TokenReview).Status.Authenticated {
		t.Errorf("a bad token: got %v, %v; want not authenticated", out, err)
	}
	if _, err := tr.Create(context.Background(), &authenticationv1.TokenReview{}, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("no token: got %v, want 400", err)
	}
}
