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

package lease

import (
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// dropDisabledFields drops strategy and preferredHolder, unless
// CoordinatedLeaderElection is on or old (nil on create) has them.
func dropDisabledFields(spec, old *coordinationv1.LeaseSpec) {
	if utilfeature.DefaultFeatureGate.Enabled(genericfeatures.CoordinatedLeaderElection) {
		return
	}
	if old == nil || old.Strategy == nil {
		spec.Strategy = nil
	}
	if old == nil || old.PreferredHolder == nil {
		spec.PreferredHolder = nil
	}
}

// validate checks a lease's spec as upstream's ValidateLeaseSpec does.
func validate(spec *coordinationv1.LeaseSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		errs = append(errs, validateStrategy(*spec.Strategy, p.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(p.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// validateStrategy checks a coordinated lease strategy: one of Kubernetes'
// own or a prefixed qualified name. Upstream names the field twice
// (spec.strategy.strategy), and so does this.
func validateStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, path *field.Path) field.ErrorList {
	path = path.Child("strategy")
	if !strings.Contains(string(strategy), "/") {
		if strategy != coordinationv1.OldestEmulationVersion {
			return field.ErrorList{field.NotSupported(path, strategy, []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion})}
		}
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(strategy)) {
		errs = append(errs, field.Invalid(path, strategy, msg))
	}
	return errs
}
