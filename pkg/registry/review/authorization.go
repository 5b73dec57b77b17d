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

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// NewAuthorizationStorage returns the storage of authorization.k8s.io/v1:
// the access reviews, answered by authz, and the rules review, by rules.
func NewAuthorizationStorage(authz authorizer.Authorizer, rules authorizer.RuleResolver) map[string]rest.Storage {
	return map[string]rest.Storage{
		"subjectaccessreviews":      &creater{singular: "subjectaccessreview", new: func() runtime.Object { return &authorizationv1.SubjectAccessReview{} }, create: subjectAccessReview(authz)},
		"selfsubjectaccessreviews":  &creater{singular: "selfsubjectaccessreview", new: func() runtime.Object { return &authorizationv1.SelfSubjectAccessReview{} }, create: selfSubjectAccessReview(authz)},
		"localsubjectaccessreviews": &creater{singular: "localsubjectaccessreview", namespaced: true, new: func() runtime.Object { return &authorizationv1.LocalSubjectAccessReview{} }, create: localSubjectAccessReview(authz)},
		"selfsubjectrulesreviews":   &creater{singular: "selfsubjectrulesreview", new: func() runtime.Object { return &authorizationv1.SelfSubjectRulesReview{} }, create: selfSubjectRulesReview(rules)},
	}
}

// creater is the REST storage of a kind that can only be created.
type creater struct {
	singular   string
	namespaced bool
	new        func() runtime.Object
	create     func(ctx context.Context, obj runtime.Object) (runtime.Object, error)
}

var (
	_ rest.Creater              = (*creater)(nil)
	_ rest.Scoper               = (*creater)(nil)
	_ rest.SingularNameProvider = (*creater)(nil)
)

func (c *creater) New() runtime.Object     { return c.new() }
func (c *creater) Destroy()                {}
func (c *creater) NamespaceScoped() bool   { return c.namespaced }
func (c *creater) GetSingularName() string { return c.singular }
func (c *creater) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	return c.create(ctx, obj)
}

func subjectAccessReview(authz authorizer.Authorizer) func(context.Context, runtime.Object) (runtime.Object, error) {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		sar := obj.(*authorizationv1.SubjectAccessReview)
		errs := validateSpec(sar.Spec)
		errs = append(errs, metadataEmpty(sar.ObjectMeta, false)...)
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("SubjectAccessReview").GroupKind(), "", errs)
		}
		sar.Status = decide(ctx, authz, attributesFrom(sar.Spec))
		return sar, nil
	}
}

func localSubjectAccessReview(authz authorizer.Authorizer) func(context.Context, runtime.Object) (runtime.Object, error) {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		sar := obj.(*authorizationv1.LocalSubjectAccessReview)
		errs := validateSpec(sar.Spec)
		errs = append(errs, metadataEmpty(sar.ObjectMeta, true)...)
		if ra := sar.Spec.ResourceAttributes; ra != nil && ra.Namespace != sar.Namespace {
			errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), ra.Namespace, "must match metadata.namespace"))
		}
		if sar.Spec.NonResourceAttributes != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), sar.Spec.NonResourceAttributes, "disallowed on this kind of request"))
		}
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("LocalSubjectAccessReview").GroupKind(), "", errs)
		}
		namespace := genericapirequest.NamespaceValue(ctx)
		if namespace == "" {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", namespace))
		}
		if namespace != sar.Namespace {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", namespace))
		}
		sar.Status = decide(ctx, authz, attributesFrom(sar.Spec))
		return sar, nil
	}
}

func selfSubjectAccessReview(authz authorizer.Authorizer) func(context.Context, runtime.Object) (runtime.Object, error) {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		sar := obj.(*authorizationv1.SelfSubjectAccessReview)
		errs := validateAttributes(field.NewPath("spec"), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
		errs = append(errs, metadataEmpty(sar.ObjectMeta, false)...)
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind("SelfSubjectAccessReview").GroupKind(), "", errs)
		}
		u, ok := genericapirequest.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewBadRequest("no user present on request")
		}
		sar.Status = decide(ctx, authz, attributes(u, sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
		return sar, nil
	}
}

func selfSubjectRulesReview(rules authorizer.RuleResolver) func(context.Context, runtime.Object) (runtime.Object, error) {
	return func(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
		srr := obj.(*authorizationv1.SelfSubjectRulesReview)
		u, ok := genericapirequest.UserFrom(ctx)
		if !ok {
			return nil, apierrors.NewBadRequest("no user present on request")
		}
		if srr.Spec.Namespace == "" {
			return nil, apierrors.NewBadRequest("no namespace on request")
		}
		resources, nonResources, incomplete, err := rules.RulesFor(ctx, u, srr.Spec.Namespace)
		out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
			ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{}, Incomplete: incomplete,
		}}
		for _, r := range resources {
			out.Status.ResourceRules = append(out.Status.ResourceRules, authorizationv1.ResourceRule{
				Verbs: r.GetVerbs(), APIGroups: r.GetAPIGroups(), Resources: r.GetResources(), ResourceNames: r.GetResourceNames(),
			})
		}
		for _, r := range nonResources {
			out.Status.NonResourceRules = append(out.Status.NonResourceRules, authorizationv1.NonResourceRule{Verbs: r.GetVerbs(), NonResourceURLs: r.GetNonResourceURLs()})
		}
		if err != nil {
			out.Status.EvaluationError = err.Error()
		}
		return out, nil
	}
}

// decide asks authz and reports its answer as upstream's reviews do.
func decide(ctx context.Context, authz authorizer.Authorizer, attrs authorizer.AttributesRecord) authorizationv1.SubjectAccessReviewStatus {
	decision, reason, err := authz.Authorize(ctx, attrs)
	status := authorizationv1.SubjectAccessReviewStatus{Allowed: decision == authorizer.DecisionAllow, Denied: decision == authorizer.DecisionDeny, Reason: reason}
	if err != nil {
		status.EvaluationError = err.Error()
	}
	return status
}

func validateSpec(spec authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	p := field.NewPath("spec")
	errs := validateAttributes(p, spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(p.Child("user"), spec.User, "at least one of user or group must be specified"))
	}
	return errs
}

func validateAttributes(p *field.Path, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) field.ErrorList {
	if (ra == nil) == (nra == nil) {
		return field.ErrorList{field.Invalid(p, nra, "exactly one of nonResourceAttributes or resourceAttributes must be specified")}
	}
	return nil
}

// metadataEmpty: a review's metadata must be empty (but for its namespace,
// if namespaced).
func metadataEmpty(meta metav1.ObjectMeta, namespaced bool) field.ErrorList {
	shallow := meta
	shallow.ManagedFields = nil
	msg := "must be empty"
	if namespaced {
		shallow.Namespace = ""
		msg = "must be empty except for namespace"
	}
	if !apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, shallow) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), meta, msg)}
	}
	return nil
}

// attributesFrom is the request a SubjectAccessReview's spec describes.
func attributesFrom(spec authorizationv1.SubjectAccessReviewSpec) authorizer.AttributesRecord {
	u := &user.DefaultInfo{Name: spec.User, Groups: spec.Groups, UID: spec.UID, Extra: map[string][]string{}}
	for k, v := range spec.Extra {
		u.Extra[k] = v
	}
	return attributes(u, spec.ResourceAttributes, spec.NonResourceAttributes)
}

// attributes is the request of u that ra or nra describe, as upstream's
// ResourceAttributesFrom and NonResourceAttributesFrom make it.
func attributes(u user.Info, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) authorizer.AttributesRecord {
	if ra == nil {
		return authorizer.AttributesRecord{User: u, Path: nra.Path, Verb: nra.Verb}
	}
	version := ra.Version
	if version == "" {
		version = "*"
	}
	out := authorizer.AttributesRecord{
		User: u, Verb: ra.Verb, Namespace: ra.Namespace, APIGroup: ra.Group, APIVersion: version,
		Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name, ResourceRequest: true,
	}
	if s := ra.LabelSelector; s != nil && s.RawSelector != "" {
		if sel, err := labels.Parse(s.RawSelector); err != nil {
			out.LabelSelectorParsingErr = err
		} else {
			out.LabelSelectorRequirements, _ = sel.Requirements()
		}
	}
	if s := ra.FieldSelector; s != nil && s.RawSelector != "" {
		if sel, err := fields.ParseSelector(s.RawSelector); err != nil {
			out.FieldSelectorParsingErr = err
		} else {
			out.FieldSelectorRequirements = sel.Requirements()
		}
	}
	return out
}
