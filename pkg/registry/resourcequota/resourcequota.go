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

package resourcequota

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of resourcequotas and resourcequotas/status.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(true)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(&obj.(*corev1.ResourceQuota).Spec)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		spec, oldSpec := &obj.(*corev1.ResourceQuota).Spec, &old.(*corev1.ResourceQuota).Spec
		errs := validateSpec(spec)
		if !sets.New(spec.Scopes...).Equal(sets.New(oldSpec.Scopes...)) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "scopes"), spec.Scopes, apimachineryvalidation.FieldImmutableErrorMsg))
		}
		return errs
	}
	main, status := registry.SpecAndStatus{GroupVersion: "v1"}.Strategies(base)
	main.Warnings = func(obj, old runtime.Object) []string {
		if old != nil { // upstream warns on create only
			return nil
		}
		return warnings(obj.(*corev1.ResourceQuota).Spec.Hard)
	}
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList { return validateStatusUpdate(obj.(*corev1.ResourceQuota)) }
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("resourcequotas"),
		Singular:   "resourcequota",
		ShortNames: []string{"quota"},
		New:        func() runtime.Object { return &corev1.ResourceQuota{} },
		NewList:    func() runtime.Object { return &corev1.ResourceQuotaList{} },
		Strategy:   main,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"resourcequotas":        store,
		"resourcequotas/status": registry.NewStatusREST(store, status),
	}, nil
}

// table prints, as upstream, "used/hard" of each resource in status.hard,
// limits.* in the Limit column and the rest in the Request column: until a
// quota controller fills the status (there is none here), both are empty.
var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		q := obj.(*corev1.ResourceQuota)
		var requests, limits []string
		for _, name := range slices.Sorted(maps.Keys(q.Status.Hard)) {
			used, hard := q.Status.Used[name], q.Status.Hard[name]
			cell := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
			if pieces := strings.Split(string(name), "."); len(pieces) > 1 && pieces[0] == "limits" {
				limits = append(limits, cell)
			} else {
				requests = append(requests, cell)
			}
		}
		return []any{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), registry.Age(q.CreationTimestamp)}
	},
}

var specPath = field.NewPath("spec")

// validateSpec is upstream's ValidateResourceQuotaSpec: resource names and
// quantities of spec.hard, and the scopes and scope selector.
func validateSpec(spec *corev1.ResourceQuotaSpec) field.ErrorList {
	errs := validateResourceList(spec.Hard, specPath.Child("hard"))
	errs = append(errs, validateScopes(spec)...)
	if spec.ScopeSelector != nil {
		errs = append(errs, validateScopeSelector(spec)...)
	}
	return errs
}

func validateResourceList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		errs = append(errs, validateQuotaResourceName(name, p.Key(string(name)))...)
		errs = append(errs, ValidateQuantity(name, q, p.Key(string(name)))...)
	}
	return errs
}

// validateStatusUpdate is upstream's ValidateResourceQuotaStatusUpdate. Its
// resourceVersion check never fires there (the generic store fills in the
// version of an unconditional update before validating), so it is left out.
func validateStatusUpdate(q *corev1.ResourceQuota) field.ErrorList {
	errs := validateResourceList(q.Status.Hard, field.NewPath("status", "hard"))
	return append(errs, validateResourceList(q.Status.Used, field.NewPath("status", "used"))...)
}

var (
	standardScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeVolumeAttributesClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)
	podCountAndComputeResources = sets.New[corev1.ResourceName](corev1.ResourcePods, corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	claimResources      = sets.New[corev1.ResourceName](corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage)
	conflictingScopes   = [][2]corev1.ResourceQuotaScope{{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort}, {corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating}}
	existsOnlyScopes    = sets.New(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)
	existsOnlyScopesMsg = "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)

// scopeAppliesTo is upstream's IsResourceQuotaScopeValidForResource.
func scopeAppliesTo(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCountAndComputeResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return name == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return claimResources.Has(name)
	default:
		return true
	}
}

// scopesErrors checks scopes against each other and against the quota's
// resources, reporting at p with bad as the value.
func scopesErrors(spec *corev1.ResourceQuotaSpec, scopes []corev1.ResourceQuotaScope, p *field.Path, bad any, badScopePath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, scope := range scopes {
		if !standardScopes.Has(scope) {
			if badScopePath != nil {
				errs = append(errs, field.Invalid(badScopePath, scope, "unsupported scope"))
			} else {
				errs = append(errs, field.Invalid(p, bad, "unsupported scope"))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(spec.Hard)) {
			if (quotaResources.Has(name) || isQuotaHugePages(name)) && !scopeAppliesTo(scope, name) {
				errs = append(errs, field.Invalid(p, bad, "unsupported scope applied to resource"))
			}
		}
	}
	return errs
}

func hasConflict(scopes sets.Set[corev1.ResourceQuotaScope]) bool {
	for _, pair := range conflictingScopes {
		if scopes.HasAll(pair[0], pair[1]) {
			return true
		}
	}
	return false
}

// validateScopes is upstream's validateResourceQuotaScopes.
func validateScopes(spec *corev1.ResourceQuotaSpec) field.ErrorList {
	if len(spec.Scopes) == 0 {
		return nil
	}
	p := specPath.Child("scopes")
	errs := scopesErrors(spec, spec.Scopes, p, spec.Scopes, nil)
	if hasConflict(sets.New(spec.Scopes...)) {
		errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

// validateScopeSelector is upstream's validateScopedResourceSelectorRequirement.
func validateScopeSelector(spec *corev1.ResourceQuotaSpec) field.ErrorList {
	p := specPath.Child("scopeSelector", "matchExpressions")
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		errs = append(errs, scopesErrors(spec, []corev1.ResourceQuotaScope{req.ScopeName}, p, registry.Internal(*spec.ScopeSelector), p.Child("scopeName"))...)
		if existsOnlyScopes.Has(req.ScopeName) && req.Operator != corev1.ScopeSelectorOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), req.Operator, existsOnlyScopesMsg))
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				errs = append(errs, field.Invalid(p.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			errs = append(errs, field.Invalid(p.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		seen.Insert(req.ScopeName)
	}
	if hasConflict(seen) {
		errs = append(errs, field.Invalid(p, spec.Scopes, "conflicting scopes"))
	}
	return errs
}

// warnings are kube-apiserver's of a quota's create: a request quota
// (requests.X, or the bare cpu or memory) above its limit quota (limits.X).
func warnings(hard corev1.ResourceList) []string {
	var warnings []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage} {
		requestName := "requests." + name
		request, ok := hard[requestName]
		if !ok && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			if request, ok = hard[name]; ok {
				requestName = name
			}
		}
		limitName := "limits." + name
		if limit, limitOK := hard[limitName]; ok && limitOK && request.Cmp(limit) > 0 {
			warnings = append(warnings, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)", requestName, request.String(), limitName, limit.String()))
		}
	}
	return warnings
}
