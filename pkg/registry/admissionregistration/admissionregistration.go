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

package admissionregistration

import (
	"fmt"
	"reflect"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "admissionregistration.k8s.io/v1"

// categories are upstream's: kubectl get api-extensions lists these types.
var categories = []string{"api-extensions"}

// NewStorage returns the storage of validatingwebhookconfigurations,
// mutatingwebhookconfigurations, validatingadmissionpolicies (and their
// status), validatingadmissionpolicybindings, mutatingadmissionpolicies and
// mutatingadmissionpolicybindings. Unlike upstream's, it does not check that
// the writer of a policy or binding may read its paramKind or paramRef.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	policy, policyStatus := validatingPolicyStrategies()
	resources := []registry.Resource{
		{
			Resource: admissionregistrationv1.Resource("validatingwebhookconfigurations"),
			Singular: "validatingwebhookconfiguration",
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} },
			Strategy: webhookConfigurationStrategy(func(obj runtime.Object) []webhook {
				return validatingWebhooks(obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks)
			}, func(obj runtime.Object) any {
				return obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks
			}),
			Table: webhookConfigurationTable(func(obj runtime.Object) (metav1.ObjectMeta, int) {
				c := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
				return c.ObjectMeta, len(c.Webhooks)
			}),
		},
		{
			Resource: admissionregistrationv1.Resource("mutatingwebhookconfigurations"),
			Singular: "mutatingwebhookconfiguration",
			New:      func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} },
			Strategy: webhookConfigurationStrategy(func(obj runtime.Object) []webhook {
				return mutatingWebhooks(obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks)
			}, func(obj runtime.Object) any {
				return obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks
			}),
			Table: webhookConfigurationTable(func(obj runtime.Object) (metav1.ObjectMeta, int) {
				c := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
				return c.ObjectMeta, len(c.Webhooks)
			}),
		},
		{
			Resource: admissionregistrationv1.Resource("validatingadmissionpolicies"),
			Singular: "validatingadmissionpolicy",
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} },
			Strategy: policy,
			Table:    validatingPolicyTable,
		},
		{
			Resource: admissionregistrationv1.Resource("validatingadmissionpolicybindings"),
			Singular: "validatingadmissionpolicybinding",
			New:      func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} },
			Strategy: validatingBindingStrategy(),
			Table: bindingTable(func(obj runtime.Object) (metav1.ObjectMeta, string, *admissionregistrationv1.ParamRef) {
				b := obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
				return b.ObjectMeta, b.Spec.PolicyName, b.Spec.ParamRef
			}),
		},
		{
			Resource: admissionregistrationv1.Resource("mutatingadmissionpolicies"),
			Singular: "mutatingadmissionpolicy",
			New:      func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} },
			Strategy: mutatingPolicyStrategy(),
			Table:    mutatingPolicyTable,
		},
		{
			Resource: admissionregistrationv1.Resource("mutatingadmissionpolicybindings"),
			Singular: "mutatingadmissionpolicybinding",
			New:      func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
			NewList:  func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} },
			Strategy: mutatingBindingStrategy(),
			Table: bindingTable(func(obj runtime.Object) (metav1.ObjectMeta, string, *admissionregistrationv1.ParamRef) {
				b := obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding)
				return b.ObjectMeta, b.Spec.PolicyName, b.Spec.ParamRef
			}),
		},
	}
	storage := map[string]rest.Storage{}
	for _, r := range resources {
		r.Categories = categories
		store, err := registry.NewREST(optsGetter, r)
		if err != nil {
			return nil, err
		}
		storage[r.Resource.Resource] = store
	}
	storage["validatingadmissionpolicies/status"] = registry.NewStatusREST(storage["validatingadmissionpolicies"].(*registry.REST), policyStatus)
	return storage, nil
}

// webhookConfigurationStrategy validates the webhooks of a configuration
// (which hooks returns) and counts changes of them (webhooks returns them
// as stored: upstream compares them with reflect.DeepEqual). As upstream's,
// an update must name the resourceVersion it replaces.
func webhookConfigurationStrategy(hooks func(runtime.Object) []webhook, webhooks func(runtime.Object) any) registry.Strategy {
	s := withGeneration(newStrategy(), webhooks, reflect.DeepEqual)
	s.ConditionalUpdate = true
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return append(validateWebhooks(hooks(obj), webhookCreateOptions), validateStaticSuffix(obj)...)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateWebhooks(hooks(obj), webhookUpdateOptions(hooks(obj), hooks(old)))
	}
	s.Warnings = func(obj, old runtime.Object) []string { return webhookWarnings(obj, old, hooks(obj)) }
	return s
}

// validatingPolicyStrategies returns the strategies of validating admission
// policies and of their status, which only the status endpoint writes.
// As upstream's, a status update keeps all of metadata a client may write
// (metav1.ResetObjectMetaForStatus), not only the spec.
func validatingPolicyStrategies() (main, status registry.Strategy) {
	base := newStrategy()
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		return append(validateValidatingPolicySpec(p.Name, &p.Spec, options{}), validateStaticSuffix(obj)...)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		p, o := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy), old.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		opts := policyUpdateOptions(validatingPolicySpec(&p.Spec), validatingPolicySpec(&o.Spec), validatingPolicyStored(&o.Spec))
		return validateValidatingPolicySpec(p.Name, &p.Spec, opts)
	}
	base.Warnings = staticSuffixWarnings
	main, status = registry.SpecAndStatus{GroupVersion: groupVersion, Generation: true}.Strategies(base)
	keepSpec := status.OnUpdate
	status.OnUpdate = func(obj, old runtime.Object) {
		keepSpec(obj, old)
		metav1.ResetObjectMetaForStatus(&obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).ObjectMeta, &old.(*admissionregistrationv1.ValidatingAdmissionPolicy).ObjectMeta)
	}
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateStatus(&obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Status)
	}
	status.ResetFields = registry.Fieldpaths(groupVersion, "spec", "metadata")
	return main, status
}

func mutatingPolicyStrategy() registry.Strategy {
	s := withGeneration(newStrategy(), func(obj runtime.Object) any {
		return obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec
	}, apiequality.Semantic.DeepEqual)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return append(validateMutatingPolicySpec(&obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec, options{}), validateStaticSuffix(obj)...)
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		p, o := obj.(*admissionregistrationv1.MutatingAdmissionPolicy), old.(*admissionregistrationv1.MutatingAdmissionPolicy)
		opts := policyUpdateOptions(mutatingPolicySpec(&p.Spec), mutatingPolicySpec(&o.Spec), mutatingPolicyStored(&o.Spec))
		return validateMutatingPolicySpec(&p.Spec, opts)
	}
	s.Warnings = staticSuffixWarnings
	return s
}

func validatingBindingStrategy() registry.Strategy {
	s := withGeneration(newStrategy(), func(obj runtime.Object) any {
		return obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec
	}, apiequality.Semantic.DeepEqual)
	spec := func(obj runtime.Object) *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec {
		return &obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec
	}
	validate := func(obj runtime.Object) field.ErrorList {
		spec, p := spec(obj), field.NewPath("spec")
		return append(validateBinding(spec.PolicyName, true, spec.ParamRef, spec.MatchResources, p), validateValidationActions(spec.ValidationActions, p.Child("validationActions"))...)
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return registry.WithDeclarative(append(validate(obj), validateStaticSuffix(obj)...), declarativeBindingErrors(spec(obj), nil))
	}
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return registry.WithDeclarative(validate(obj), declarativeBindingErrors(spec(obj), spec(old)))
	}
	s.Warnings = staticSuffixWarnings
	return s
}

func mutatingBindingStrategy() registry.Strategy {
	s := withGeneration(newStrategy(), func(obj runtime.Object) any {
		return obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec
	}, apiequality.Semantic.DeepEqual)
	validate := func(obj runtime.Object) field.ErrorList {
		spec := &obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec
		p := field.NewPath("spec")
		errs := validateBinding(spec.PolicyName, false, spec.ParamRef, spec.MatchResources, p)
		if spec.MatchResources != nil {
			errs = append(errs, validateMutatingOperations(spec.MatchResources, p.Child("matchResources"))...)
		}
		return errs
	}
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return append(validate(obj), validateStaticSuffix(obj)...) }
	s.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList { return validate(obj) }
	s.Warnings = staticSuffixWarnings
	return s
}

// withGeneration makes s start metadata.generation at 1 on create and count
// updates that change what spec returns (unequal by equal), as upstream's
// strategies of these types do.
func withGeneration(s registry.Strategy, spec func(runtime.Object) any, equal func(a, b any) bool) registry.Strategy {
	s.OnCreate = func(obj runtime.Object) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetGeneration(1)
		}
	}
	s.OnUpdate = func(obj, old runtime.Object) {
		if equal(spec(obj), spec(old)) {
			return
		}
		m, err1 := meta.Accessor(obj)
		oldMeta, err2 := meta.Accessor(old)
		if err1 == nil && err2 == nil {
			m.SetGeneration(oldMeta.GetGeneration() + 1)
		}
	}
	return s
}

// staticConfigSuffix ends the names reserved for the configurations
// kube-apiserver loads from manifest files, which the API may not create.
const staticConfigSuffix = ".static.k8s.io"

// validateStaticSuffix is upstream's ValidateStaticSuffix, checked on create
// while the ManifestBasedAdmissionControlConfig gate is on (the default in 1.37).
func validateStaticSuffix(obj runtime.Object) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil || !strings.HasSuffix(m.GetName(), staticConfigSuffix) ||
		!utilfeature.DefaultFeatureGate.Enabled(genericfeatures.ManifestBasedAdmissionControlConfig) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), m.GetName(),
		fmt.Sprintf("names ending with %q are reserved for static manifest-based configurations and cannot be managed via the API", staticConfigSuffix))}
}

// newStrategy is a cluster-scoped strategy whose metadata is checked as
// upstream's admission registration types check it (GenericMetadata).
func newStrategy() registry.Strategy {
	s := registry.NewStrategy(false)
	s.GenericMetadata = true
	return s
}
