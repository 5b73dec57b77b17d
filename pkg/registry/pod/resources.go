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

package pod

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/resourcequota"
)

// validateResources is upstream's validateResourceRequirements (its
// maps' keys sorted; upstream's order is a map's): names (as validName
// judges them) and quantities, huge pages in whole pages and with cpu or
// memory, each request within its limit (equal to it where it cannot be
// overcommitted, which needs a limit), and claims the pod has.
func validateResources(r *corev1.ResourceRequirements, validName resourceNameFunc, claims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limitsPath, requestsPath := p.Child("limits"), p.Child("requests")
	computes, hugePages := false, false
	for _, name := range slices.Sorted(maps.Keys(r.Limits)) {
		q, np := r.Limits[name], limitsPath.Key(string(name))
		errs = append(errs, validName(name, np)...)
		errs = append(errs, resourcequota.ValidateQuantity(name, q, np)...)
		if isHugePages(name) {
			hugePages = true
			errs = append(errs, wholeHugePages(name, q, np)...)
		}
		computes = computes || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		q, np := r.Requests[name], requestsPath.Key(string(name))
		errs = append(errs, validName(name, np)...)
		errs = append(errs, resourcequota.ValidateQuantity(name, q, np)...)
		limit, ok := r.Limits[name]
		switch {
		case ok && q.Cmp(limit) != 0 && !resourcequota.IsOvercommitAllowed(name):
			errs = append(errs, field.Invalid(requestsPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(requestsPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !resourcequota.IsOvercommitAllowed(name):
			errs = append(errs, field.Required(limitsPath, "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(name) {
			hugePages = true
			errs = append(errs, wholeHugePages(name, q, np)...)
		}
		computes = computes || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	if hugePages && !computes {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	return append(errs, validateClaimNames(r.Claims, claims, p.Child("claims"))...)
}

// ValidateOverhead is upstream's validateOverhead: the overhead checked
// as a container's limits (hence its errors' paths).
func ValidateOverhead(overhead corev1.ResourceList, p *field.Path) field.ErrorList {
	return validateResources(&corev1.ResourceRequirements{Limits: overhead}, resourcequota.ValidateContainerResourceName, nil, p)
}

type resourceNameFunc func(corev1.ResourceName, *field.Path) field.ErrorList

func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// wholeHugePages is upstream's validateResourceQuantityHugePageValue: a
// whole number of pages of the size the name gives.
func wholeHugePages(name corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	size, err := resource.ParseQuantity(strings.TrimPrefix(string(name), corev1.ResourceHugePagesPrefix))
	if err != nil || size.Sign() <= 0 || size.MilliValue()%1000 != 0 || q.Value()%size.Value() != 0 {
		return field.ErrorList{field.Invalid(p, q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), name))}
	}
	return nil
}

// validateClaimNames is upstream's validateResourceClaimNames: each claim
// (and request of one) named once, and among the pod's.
func validateClaimNames(refs []corev1.ResourceClaim, claims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, ref := range refs {
		ip := p.Index(i)
		if ref.Name == "" {
			errs = append(errs, field.Required(ip, ""))
			continue
		}
		if seen.Has(ref.Name) {
			errs = append(errs, field.Duplicate(ip, ref.Name))
		} else {
			key := ref.Name
			if ref.Request != "" {
				errs = append(errs, dns1123Label(ref.Request, ip.Child("request"))...)
				key += "/" + ref.Request
			}
			switch {
			case seen.Has(key):
				errs = append(errs, field.Duplicate(ip, key))
			case ref.Request == "":
				for _, k := range sets.List(seen) { // upstream's order is a map's
					if claim, _, ok := strings.Cut(k, "/"); ok && claim == ref.Name {
						errs = append(errs, field.Duplicate(ip, ref.Name))
					}
				}
			}
			seen.Insert(key)
		}
		if !claims.Has(ref.Name) {
			err := field.NotFound(ip, ref.Name)
			err.Detail = "must be one of the names in pod.spec.resourceClaims which is empty"
			if len(claims) > 0 {
				err.Detail = "must be one of the names in pod.spec.resourceClaims: " + strings.Join(sets.List(claims), ", ")
			}
			errs = append(errs, err)
		}
	}
	return errs
}
