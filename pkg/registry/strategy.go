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

package registry

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// Strategy implements the create, update and delete strategies of one
// resource (or one subresource) from a few per-type hooks. Every hook is optional.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator

	// Namespaced is true for namespace-scoped resources.
	Namespaced bool
	// CreateOnUpdate lets a PUT of a missing object create it.
	CreateOnUpdate bool
	// ConditionalUpdate makes an update name the resourceVersion it
	// replaces (AllowUnconditionalUpdate is false).
	ConditionalUpdate bool
	// ValidateName checks metadata.name; defaults to a DNS subdomain.
	ValidateName apimachineryvalidation.ValidateNameFunc
	// ValidateNameOf, if set, returns the check of obj's metadata.name in
	// place of ValidateName, for a name that depends on the object's fields.
	ValidateNameOf func(obj runtime.Object) apimachineryvalidation.ValidateNameFunc
	// GenericMetadata leaves out the rule core's ValidateObjectMeta and
	// ValidateObjectMetaUpdate add to k8s.io/apimachinery's, which most
	// of upstream's types use: a finalizer name without a domain is a
	// standard one. Upstream's admission registration, coordination and
	// node.k8s.io types check metadata without it.
	GenericMetadata bool

	// OnCreate clears what a create may not set (e.g. status).
	OnCreate func(obj runtime.Object)
	// OnCreateRequest, after OnCreate, sets what a create takes from its
	// request's context (e.g. the requesting user).
	OnCreateRequest func(ctx context.Context, obj runtime.Object)
	// OnUpdate carries over from old what an update may not change.
	OnUpdate func(obj, old runtime.Object)
	// ValidateFields checks the type's own fields on create (and, unless
	// ValidateFieldsUpdate is set, on update).
	ValidateFields func(obj runtime.Object) field.ErrorList
	// ValidateFieldsUpdate checks the type's own fields on update.
	ValidateFieldsUpdate func(obj, old runtime.Object) field.ErrorList
	// ValidateCreateRequest, if set, checks a create in place of the
	// metadata checks and ValidateFields, with the request's context:
	// k8s.io/apiserver's BeforeCreate checks the common metadata after it,
	// once it passes (upstream's PodDisruptionBudgets and events check
	// only their own fields on create).
	ValidateCreateRequest func(ctx context.Context, obj runtime.Object) field.ErrorList
	// ValidateUpdateRequest, if set, checks an update in place of
	// ValidateFieldsUpdate, with the request's context (e.g. to ask the
	// authorizer about the requesting user).
	ValidateUpdateRequest func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	// Warnings returns the warnings of a create (old is nil) or an update
	// that passed validation, which the client gets as Warning headers.
	Warnings func(obj, old runtime.Object) []string
	// ResetFields are the fields server-side apply must not let this endpoint own.
	ResetFields map[fieldpath.APIVersion]*fieldpath.Set
}

// NewStrategy returns a strategy with the scheme and the name generator set.
func NewStrategy(namespaced bool) Strategy {
	return Strategy{ObjectTyper: api.Scheme, NameGenerator: names.SimpleNameGenerator, Namespaced: namespaced}
}

var (
	_ rest.RESTCreateStrategy  = Strategy{}
	_ rest.RESTUpdateStrategy  = Strategy{}
	_ rest.RESTDeleteStrategy  = Strategy{}
	_ rest.ResetFieldsStrategy = Strategy{}
)

func (s Strategy) NamespaceScoped() bool                         { return s.Namespaced }
func (s Strategy) AllowCreateOnUpdate(context.Context) bool      { return s.CreateOnUpdate }
func (s Strategy) AllowUnconditionalUpdate(context.Context) bool { return !s.ConditionalUpdate }
func (s Strategy) Canonicalize(runtime.Object)                   {}

// WarningsOnCreate implements rest.RESTCreateStrategy.
func (s Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	if s.Warnings == nil {
		return nil
	}
	return s.Warnings(obj, nil)
}

// WarningsOnUpdate implements rest.RESTUpdateStrategy.
func (s Strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	if s.Warnings == nil {
		return nil
	}
	return s.Warnings(obj, old)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (s Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set { return s.ResetFields }

// PrepareForCreate implements rest.RESTCreateStrategy.
func (s Strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	if s.OnCreate != nil {
		s.OnCreate(obj)
	}
	if s.OnCreateRequest != nil {
		s.OnCreateRequest(ctx, obj)
	}
}

// PrepareForUpdate implements rest.RESTUpdateStrategy.
func (s Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if s.OnUpdate != nil {
		s.OnUpdate(obj, old)
	}
}

// Validate implements rest.RESTCreateStrategy.
func (s Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	if s.ValidateCreateRequest != nil {
		return s.ValidateCreateRequest(ctx, obj)
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), err)}
	}
	nameFn := s.ValidateName
	if s.ValidateNameOf != nil {
		nameFn = s.ValidateNameOf(obj)
	}
	if nameFn == nil {
		nameFn = apimachineryvalidation.NameIsDNSSubdomain
	}
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(accessor, s.Namespaced, nameFn, field.NewPath("metadata"))
	errs = append(errs, s.validateFinalizers(accessor)...)
	if s.ValidateFields != nil {
		errs = append(errs, s.ValidateFields(obj)...)
	}
	return errs
}

var standardFinalizers = sets.New(string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents)

// validateFinalizers is ValidateFinalizerNames of the object's
// finalizers, unless s has GenericMetadata.
func (s Strategy) validateFinalizers(obj metav1.Object) field.ErrorList {
	if s.GenericMetadata {
		return nil
	}
	return ValidateFinalizerNames(obj.GetFinalizers())
}

// ValidateFinalizerNames is the rule core's ValidateObjectMeta adds to
// k8s.io/apimachinery's: a finalizer name without a domain is a standard
// one (kubernetes, orphan, foregroundDeletion).
func ValidateFinalizerNames(finalizers []string) field.ErrorList {
	var errs field.ErrorList
	for i, name := range finalizers {
		if !strings.Contains(name, "/") && !standardFinalizers.Has(name) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "finalizers").Index(i), name, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// ValidateUpdate implements rest.RESTUpdateStrategy. The metadata's update
// rules (immutable name and uid, no new finalizers once deleted, ...) are
// k8s.io/apiserver's rest.ValidateUpdate's to check (validateCommonFields):
// checked here too, each error would be reported twice.
func (s Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	var errs field.ErrorList
	if accessor, err := meta.Accessor(obj); err == nil {
		errs = s.validateFinalizers(accessor)
	}
	switch {
	case s.ValidateUpdateRequest != nil:
		return append(errs, s.ValidateUpdateRequest(ctx, obj, old)...)
	case s.ValidateFieldsUpdate != nil:
		return append(errs, s.ValidateFieldsUpdate(obj, old)...)
	case s.ValidateFields != nil:
		return append(errs, s.ValidateFields(obj)...)
	}
	return errs
}
