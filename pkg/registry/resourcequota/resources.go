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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The resource name sets of upstream's pkg/apis/core/helper.
var (
	standardResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	// quotaResources are standardResources but storage.
	quotaResources     = standardResources.Clone().Delete(corev1.ResourceStorage)
	containerResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
	integerResources   = sets.New[corev1.ResourceName](
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
)

const (
	hugePagesPrefix         = corev1.ResourceHugePagesPrefix
	requestsHugePagesPrefix = corev1.ResourceRequestsHugePagesPrefix
)

func isQuotaHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), hugePagesPrefix) || strings.HasPrefix(string(name), requestsHugePagesPrefix)
}

// IsNativeResource: an unprefixed name or one in *kubernetes.io/.
func IsNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// IsOvercommitAllowed: a native resource that is not huge pages.
func IsOvercommitAllowed(name corev1.ResourceName) bool {
	return IsNativeResource(name) && !strings.HasPrefix(string(name), hugePagesPrefix)
}

// isExtendedResource: not native, not "requests."-prefixed, and a qualified
// name once prefixed with "requests.".
func isExtendedResource(name corev1.ResourceName) bool {
	if IsNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// ValidateResourceName is upstream's validateResourceName: a qualified name,
// standard unless it has a domain.
func ValidateResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(name), "/") && !standardResources.Has(name) && !isQuotaHugePages(name) {
		return field.ErrorList{field.Invalid(p, name, "must be a standard resource type or fully qualified")}
	}
	return nil
}

// ValidateContainerResourceName is upstream's ValidateContainerResourceName:
// cpu, memory, ephemeral-storage, huge pages, or an extended resource.
func ValidateContainerResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := ValidateResourceName(name, p)
	switch {
	case !strings.Contains(string(name), "/"):
		if !containerResources.Has(name) && !strings.HasPrefix(string(name), hugePagesPrefix) {
			return append(errs, field.Invalid(p, name, "must be a standard resource for containers"))
		}
	case !IsNativeResource(name) && !isExtendedResource(name):
		return append(errs, field.Invalid(p, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// validateQuotaResourceName is upstream's ValidateResourceQuotaResourceName.
func validateQuotaResourceName(name corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := ValidateResourceName(name, p)
	if !strings.Contains(string(name), "/") && !quotaResources.Has(name) && !isQuotaHugePages(name) {
		return append(errs, field.Invalid(p, name, "must be a standard resource for quota"))
	}
	return errs
}

// ValidateQuantity is upstream's ValidateResourceQuantityValue: not
// negative, and whole for the resources counted in units.
func ValidateQuantity(name corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
	}
	if (integerResources.Has(name) || isExtendedResource(name)) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(p, q, "must be an integer"))
	}
	return errs
}
