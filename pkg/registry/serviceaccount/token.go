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

package serviceaccount

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// IssueFunc issues a token for sa and audiences, valid for ttl, bound to
// the object of boundKind (Pod or Secret; "" for none), and returns when
// it expires.
type IssueFunc func(sa *corev1.ServiceAccount, audiences []string, ttl time.Duration, boundKind, boundName string, boundUID types.UID) (string, time.Time, error)

// TokenREST serves serviceaccounts/token: TokenRequest, as kube-apiserver.
type TokenREST struct {
	ServiceAccounts, Pods, Secrets rest.Getter
	Issue                          IssueFunc
	// Audiences are the API's, a request's default.
	Audiences []string
}

var (
	_                                  rest.NamedCreater             = (*TokenREST)(nil)
	_                                  rest.GroupVersionKindProvider = (*TokenREST)(nil)
	tokenRequestKind                                                 = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")
	minTokenTTL, maxTokenTTL, tokenTTL                               = int64(600), int64(1 << 32), int64(3600)
)

func (r *TokenREST) New() runtime.Object { return &authenticationv1.TokenRequest{} }
func (r *TokenREST) Destroy()            {}

// GroupVersionKind implements rest.GroupVersionKindProvider: the
// subresource's kind is authentication.k8s.io/v1 TokenRequest.
func (r *TokenREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return tokenRequestKind
}

// Create issues a token for the service account name, as upstream's TokenREST.
func (r *TokenREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	req := obj.(*authenticationv1.TokenRequest)
	namespace, ok := genericapirequest.NamespaceFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("namespace is required")
	}
	if req.Name != "" && req.Name != name {
		return nil, invalid(name, field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified"))
	}
	if req.Namespace != "" && req.Namespace != namespace {
		return nil, invalid(name, field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified"))
	}
	saObj, err := r.ServiceAccounts.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	if req.UID != "" && req.UID != sa.UID {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestKind.Group, Resource: tokenRequestKind.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = r.Audiences
	}
	if req.Spec.ExpirationSeconds == nil {
		req.Spec.ExpirationSeconds = &tokenTTL
	}
	req.Name, req.Namespace, req.UID = sa.Name, sa.Namespace, sa.UID
	req.CreationTimestamp = metav1.Now()
	req.Status = authenticationv1.TokenRequestStatus{}
	switch ttl := *req.Spec.ExpirationSeconds; {
	case ttl < minTokenTTL:
		return nil, invalid("", field.Invalid(field.NewPath("spec", "expirationSeconds"), ttl, "may not specify a duration less than 10 minutes"))
	case ttl > maxTokenTTL:
		return nil, invalid("", field.Invalid(field.NewPath("spec", "expirationSeconds"), ttl, "may not specify a duration larger than 2^32 seconds"))
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	kind, boundName, boundUID, err := r.bound(ctx, name, req.Spec.BoundObjectRef)
	if err != nil {
		return nil, err
	}
	token, exp, err := r.Issue(sa, req.Spec.Audiences, time.Duration(*req.Spec.ExpirationSeconds)*time.Second, kind, boundName, boundUID)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %w", err))
	}
	req.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp)}
	return req, nil
}

// bound checks the object the token is to be bound to and returns its kind,
// name and UID ("" for none).
func (r *TokenREST) bound(ctx context.Context, sa string, ref *authenticationv1.BoundObjectReference) (kind, name string, uid types.UID, err error) {
	if ref == nil {
		return "", "", "", nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var obj runtime.Object
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		if obj, err = r.Pods.Get(ctx, ref.Name, &metav1.GetOptions{}); err != nil {
			return "", "", "", err
		}
		if pod := obj.(*corev1.Pod); pod.Spec.ServiceAccountName != sa {
			return "", "", "", apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", sa))
		}
		uid = obj.(*corev1.Pod).UID
	case gvk.Group == "" && gvk.Kind == "Secret":
		if obj, err = r.Secrets.Get(ctx, ref.Name, &metav1.GetOptions{}); err != nil {
			return "", "", "", err
		}
		uid = obj.(*corev1.Secret).UID
	default:
		return "", "", "", apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && ref.UID != uid {
		return "", "", "", apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return gvk.Kind, ref.Name, uid, nil
}

func invalid(name string, errs ...*field.Error) error {
	return apierrors.NewInvalid(tokenRequestKind.GroupKind(), name, errs)
}
