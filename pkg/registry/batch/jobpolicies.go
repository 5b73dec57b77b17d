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

package batch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// A Job's pod failure and success policies, as upstream validates them.

func validatePodFailurePolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := spec.PodFailurePolicy.Rules
	if len(rules) > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(p.Child("rules"), len(rules), maxPodFailurePolicyRules))
	}
	containers := sets.New[string]()
	for _, c := range spec.Template.Spec.Containers {
		containers.Insert(c.Name)
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containers.Insert(c.Name)
	}
	for i := range rules {
		errs = append(errs, validatePodFailurePolicyRule(spec, &rules[i], p.Child("rules").Index(i), containers)...)
	}
	return errs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, p *field.Path, containers sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	actionPath := p.Child("action")
	switch {
	case rule.Action == "":
		errs = append(errs, field.Required(actionPath, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(actionPath, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, rule.Action):
		errs = append(errs, field.NotSupported(actionPath, rule.Action, podFailurePolicyActions))
	}
	if rule.OnExitCodes != nil {
		errs = append(errs, validateOnExitCodes(rule.OnExitCodes, p.Child("onExitCodes"), containers)...)
	}
	if len(rule.OnPodConditions) > 0 {
		errs = append(errs, validateOnPodConditions(rule.OnPodConditions, p.Child("onPodConditions"))...)
	}
	if rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(patterns) > maxOnPodConditionsPatterns {
		errs = append(errs, field.TooMany(p, len(patterns), maxOnPodConditionsPatterns))
	}
	for i, pattern := range patterns {
		for _, msg := range validation.IsQualifiedName(string(pattern.Type)) {
			errs = append(errs, field.Invalid(p.Index(i).Child("type"), string(pattern.Type), msg))
		}
		statusPath := p.Index(i).Child("status")
		switch {
		case pattern.Status == "":
			errs = append(errs, field.Required(statusPath, fmt.Sprintf("valid values: %q", onPodConditionsStatus)))
		case !slices.Contains(onPodConditionsStatus, pattern.Status):
			errs = append(errs, field.NotSupported(statusPath, pattern.Status, onPodConditionsStatus))
		}
	}
	return errs
}

func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, p *field.Path, containers sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	switch {
	case req.Operator == "":
		errs = append(errs, field.Required(p.Child("operator"), fmt.Sprintf("valid values: %q", onExitCodesOperators)))
	case !slices.Contains(onExitCodesOperators, req.Operator):
		errs = append(errs, field.NotSupported(p.Child("operator"), req.Operator, onExitCodesOperators))
	}
	if name := req.ContainerName; name != nil && !containers.Has(*name) {
		errs = append(errs, field.Invalid(p.Child("containerName"), *name, "must be one of the container or initContainer names in the pod template"))
	}
	valuesPath := p.Child("values")
	switch {
	case len(req.Values) == 0:
		errs = append(errs, field.Invalid(valuesPath, req.Values, "at least one value is required"))
	case len(req.Values) > maxOnExitCodesValues:
		errs = append(errs, field.TooMany(valuesPath, len(req.Values), maxOnExitCodesValues))
	}
	ordered, seen := true, sets.New[int32]()
	for i, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(valuesPath.Index(i), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			errs = append(errs, field.Duplicate(valuesPath.Index(i), v))
		}
		seen.Insert(v)
		ordered = ordered && (i == 0 || req.Values[i-1] <= v)
	}
	if !ordered {
		errs = append(errs, field.Invalid(valuesPath, req.Values, "must be ordered"))
	}
	return errs
}

// internalSuccessPolicy is a success policy as upstream's messages print
// its internal type.
func internalSuccessPolicy(s *batchv1.SuccessPolicy) any { return registry.Internal(*s) }

func validateSuccessPolicy(spec *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rules := spec.SuccessPolicy.Rules
	if len(rules) == 0 {
		errs = append(errs, field.Required(p.Child("rules"), "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(p.Child("rules"), len(rules), maxSuccessPolicyRules))
	}
	for i, rule := range rules {
		errs = append(errs, validateSuccessPolicyRule(spec, &rule, p.Child("rules").Index(i))...)
	}
	return errs
}

func validateSuccessPolicyRule(spec *batchv1.JobSpec, rule *batchv1.SuccessPolicyRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		errs = append(errs, field.Required(p, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	completions := ptr.Deref(spec.Completions, 0)
	var total int32
	if indexes := rule.SucceededIndexes; indexes != nil {
		if len(*indexes) > maxSucceededIndexesLength {
			errs = append(errs, field.TooLong(p.Child("succeededIndexes"), "", maxSucceededIndexesLength))
		}
		var err error
		if total, err = indexesTotal(*indexes, completions); err != nil {
			errs = append(errs, field.Invalid(p.Child("succeededIndexes"), *indexes, "error parsing succeededIndexes: "+err.Error()))
		}
	}
	if count := rule.SucceededCount; count != nil {
		countPath := p.Child("succeededCount")
		errs = append(errs, nonNegative(count, countPath)...)
		if *count > completions {
			errs = append(errs, field.Invalid(countPath, *count, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if rule.SucceededIndexes != nil && *count > total {
			errs = append(errs, field.Invalid(countPath, *count, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
		}
	}
	return errs
}

// indexesTotal is upstream's validateIndexesFormat: how many indexes the
// intervals ("1,3-5") hold, each below completions, in increasing order.
func indexesTotal(indexes string, completions int32) (int32, error) {
	if indexes == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, interval := range strings.Split(indexes, ",") {
		x, y, err := indexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

func indexInterval(interval string, completions int32) (int32, int32, error) {
	limits := strings.Split(interval, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", interval)
	}
	parse := func(s string) (int32, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("cannot convert string to integer for index: %q", s)
		}
		if n >= int(completions) {
			return 0, fmt.Errorf("too large index: %q", s)
		}
		return int32(n), nil
	}
	x, err := parse(limits[0])
	if err != nil || len(limits) == 1 {
		return x, x, err
	}
	y, err := parse(limits[1])
	if err != nil {
		return 0, 0, err
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return x, y, nil
}
