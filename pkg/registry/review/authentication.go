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
	"fmt"
	"net/http"
	"net/url"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// NewAuthenticationStorage returns the storage of authentication.k8s.io/v1:
// token reviews, answered by tokens (the server's bearer-token
// authenticators), and self subject reviews.
func NewAuthenticationStorage(tokens authenticator.Request) map[string]rest.Storage {
	return map[string]rest.Storage{
		"tokenreviews":       &creater{singular: "tokenreview", new: func() runtime.Object { return &authenticationv1.TokenReview{} }, create: tokenReview(tokens)},
		"selfsubjectreviews": &creater{singular: "selfsubjectreview", new: func() runtime.Object { return &authenticationv1.SelfSubjectReview{} }, create: selfSubjectReview},
	}
}

func tokenReview(tokens authenticator.Request) func(context.Context, runtime.Object) (runtime.Object, error) {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		review := obj.(*authenticationv1.TokenReview)
		if ns := genericapirequest.NamespaceValue(ctx); ns != "" {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", ns))
		}
		if review.Spec.Token == "" {
			return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
		}
		req := (&http.Request{Header: http.Header{}, URL: &url.URL{}}).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+review.Spec.Token)
		if auds := review.Spec.Audiences; len(auds) > 0 {
			req = req.WithContext(authenticator.WithAudiences(req.Context(), auds))
		}
		resp, ok, err := tokens.AuthenticateRequest(req)
		review.Status.Authenticated = ok
		if err != nil {
			review.Status.Error = err.Error()
		}
		if ok && resp != nil && resp.User != nil {
			review.Status.User = userInfo(resp.User)
			review.Status.Audiences = resp.Audiences
		}
		return review, nil
	}
}

func selfSubjectReview(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(u)},
	}, nil
}

func userInfo(u user.Info) authenticationv1.UserInfo {
	out := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: map[string]authenticationv1.ExtraValue{}}
	for k, v := range u.GetExtra() {
		out.Extra[k] = v
	}
	return out
}
