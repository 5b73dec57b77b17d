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

package flowcontrol

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/shufflesharding"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The values upstream's pkg/apis/flowcontrol/validation accepts, sorted.
var (
	supportedEnablements        = []string{string(flowcontrolv1.PriorityLevelEnablementExempt), string(flowcontrolv1.PriorityLevelEnablementLimited)}
	supportedLimitResponseTypes = []string{string(flowcontrolv1.LimitResponseTypeQueue), string(flowcontrolv1.LimitResponseTypeReject)}
)

const maxQueues int32 = 10 * 1000 * 1000

var specPath = field.NewPath("spec")

// validatePriorityLevel is what upstream's ValidatePriorityLevelConfiguration
// shows, after the metadata, on a v1 create (old nil) or update, with what
// its declarative validation changes at kube-apiserver 1.37's defaults
// (DeclarativeValidationBeta on): where the spec has changed, the rules
// declared on the v1 types report their errors, with no detail, after all
// others, in place of the handwritten errors they cover.
func validatePriorityLevel(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	// v1beta3's round-trip annotation, never set once converted.
	if _, ok := pl.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations"),
			fmt.Sprintf("annotation '%s' is forbidden", flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey)))
	}
	errs = append(errs, validatePriorityLevelSpec(&pl.Spec, pl.Name)...)
	errs = append(errs, validateMandatoryPriorityLevel(pl)...)
	errs = append(errs, validatePriorityLevelStatus(&pl.Status)...)
	var oldSpec *flowcontrolv1.PriorityLevelConfigurationSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	return registry.WithDeclarative(errs, declarativeSpecErrors(&pl.Spec, oldSpec))
}

// validatePriorityLevelSpec is upstream's ValidatePriorityLevelConfigurationSpec
// for v1 (nominalConcurrencyShares by its v1 name).
func validatePriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, name string) field.ErrorList {
	var errs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(specPath.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited").MarkCoveredByDeclarative())
		}
		if e := spec.Exempt; e != nil {
			p := specPath.Child("exempt")
			if n := e.NominalConcurrencyShares; n != nil && *n < 0 {
				errs = append(errs, field.Invalid(p.Child("nominalConcurrencyShares"), *n, "must be a non-negative integer"))
			}
			errs = append(errs, validateLendablePercent(e.LendablePercent, p)...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(specPath.Child("exempt"), "must be nil if the type is Limited").MarkCoveredByDeclarative())
		}
		if spec.Limited == nil {
			errs = append(errs, field.Required(specPath.Child("limited"), "must not be empty when type is Limited").MarkCoveredByDeclarative())
		} else {
			errs = append(errs, validateLimited(spec.Limited, specPath.Child("limited"))...)
		}
	case "":
		errs = append(errs, field.Required(specPath.Child("type"), "").MarkCoveredByDeclarative())
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), spec.Type, supportedEnablements))
	}
	return errs
}

// validatePriorityLevelStatus is upstream's ValidatePriorityLevelConfigurationStatus.
func validatePriorityLevelStatus(status *flowcontrolv1.PriorityLevelConfigurationStatus) field.ErrorList {
	types := make([]flowcontrolv1.PriorityLevelConfigurationConditionType, len(status.Conditions))
	for i, c := range status.Conditions {
		types[i] = c.Type
	}
	return validateConditionTypes(types)
}

func validateLendablePercent(percent *int32, p *field.Path) field.ErrorList {
	if percent != nil && (*percent < 0 || *percent > 100) {
		return field.ErrorList{field.Invalid(p.Child("lendablePercent"), *percent, "must be between 0 and 100, inclusive")}
	}
	return nil
}

// validateLimited is upstream's ValidateLimitedPriorityLevelConfiguration.
func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if shares := ptr.Deref(l.NominalConcurrencyShares, 0); shares < 0 {
		errs = append(errs, field.Invalid(p.Child("nominalConcurrencyShares"), shares, "must be a non-negative integer"))
	}
	errs = append(errs, validateLimitResponse(&l.LimitResponse, p.Child("limitResponse"))...)
	errs = append(errs, validateLendablePercent(l.LendablePercent, p)...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(p.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return errs
}

// validateLimitResponse is upstream's ValidateLimitResponse.
func validateLimitResponse(lr *flowcontrolv1.LimitResponse, p *field.Path) field.ErrorList {
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			return field.ErrorList{field.Forbidden(p.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited").MarkCoveredByDeclarative()}
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			return field.ErrorList{field.Required(p.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited").MarkCoveredByDeclarative()}
		}
		return validateQueuing(lr.Queuing, p.Child("queuing"))
	case "":
		return field.ErrorList{field.Required(p.Child("type"), "").MarkCoveredByDeclarative()}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), lr.Type, supportedLimitResponseTypes)}
	}
	return nil
}

// validateQueuing is upstream's ValidatePriorityLevelQueuingConfiguration:
// positive sizes, at most 10^7 queues, and a hand that shuffle sharding
// can deal.
func validateQueuing(q *flowcontrolv1.QueuingConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(p.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	if q.Queues <= 0 {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, "must be positive"))
	} else if q.Queues > maxQueues {
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch handSize := p.Child("handSize"); {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(handSize, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(handSize, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case shufflesharding.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > shufflesharding.MaxHashBits:
		errs = append(errs, field.Invalid(handSize, q.HandSize,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, shufflesharding.MaxHashBits)))
	}
	return errs
}

// validateMandatoryPriorityLevel is upstream's
// ValidateIfMandatoryPriorityLevelConfigurationObject: a mandatory level's
// spec is fixed, but for the exempt field of "exempt".
func validateMandatoryPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	mandatory, ok := mandatoryPriorityLevels[pl.Name]
	if !ok {
		return nil
	}
	have, msg := &pl.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
	if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		have = pl.Spec.DeepCopy()
		have.Exempt = mandatory.Spec.Exempt
		msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
	}
	if apiequality.Semantic.DeepEqual(&mandatory.Spec, have) {
		return nil
	}
	return field.ErrorList{field.Invalid(specPath, internalPriorityLevelSpec(&pl.Spec), msg)}
}

// declarativeSpecErrors are the errors of the rules declared on the v1
// spec (beta), as its generated Validate_PriorityLevelConfigurationSpec
// reports them: none where an update leaves the spec, or the part a rule
// looks at, as it was. exempt and limited are the members of a union that
// type discriminates, and limitResponse.queuing of one that its type does.
func declarativeSpecErrors(spec, old *flowcontrolv1.PriorityLevelConfigurationSpec) field.ErrorList {
	update := old != nil
	if update && apiequality.Semantic.DeepEqual(spec, old) {
		return nil
	}
	var errs field.ErrorList
	sameType := update && spec.Type == old.Type
	if !(sameType && apiequality.Semantic.DeepEqual(spec.Exempt, old.Exempt)) &&
		spec.Type != flowcontrolv1.PriorityLevelEnablementExempt && spec.Exempt != nil {
		errs = append(errs, field.Forbidden(specPath.Child("exempt"), ""))
	}
	if !(sameType && apiequality.Semantic.DeepEqual(spec.Limited, old.Limited)) {
		limited := spec.Type == flowcontrolv1.PriorityLevelEnablementLimited
		if limited && spec.Limited == nil {
			errs = append(errs, field.Required(specPath.Child("limited"), ""))
		} else if !limited && spec.Limited != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), ""))
		}
	}
	if spec.Type == "" && !sameType {
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	}
	if spec.Limited != nil && !(update && apiequality.Semantic.DeepEqual(spec.Limited, old.Limited)) {
		var oldResponse *flowcontrolv1.LimitResponse
		if update && old.Limited != nil {
			oldResponse = &old.Limited.LimitResponse
		}
		errs = append(errs, declarativeLimitResponseErrors(&spec.Limited.LimitResponse, oldResponse, specPath.Child("limited", "limitResponse"))...)
	}
	return errs.MarkBeta()
}

// declarativeLimitResponseErrors are Validate_LimitResponse's; the union's
// members compare by pointer, so only two missing ones are the same.
func declarativeLimitResponseErrors(lr, old *flowcontrolv1.LimitResponse, p *field.Path) field.ErrorList {
	if old != nil && apiequality.Semantic.DeepEqual(lr, old) {
		return nil
	}
	var errs field.ErrorList
	sameType := old != nil && lr.Type == old.Type
	if !(sameType && lr.Queuing == old.Queuing) {
		queue := lr.Type == flowcontrolv1.LimitResponseTypeQueue
		if queue && lr.Queuing == nil {
			errs = append(errs, field.Required(p.Child("queuing"), ""))
		} else if !queue && lr.Queuing != nil {
			errs = append(errs, field.Forbidden(p.Child("queuing"), ""))
		}
	}
	if lr.Type == "" && !sameType {
		errs = append(errs, field.Required(p.Child("type"), ""))
	}
	return errs
}

// The shapes of upstream's internal priority level types, the values its
// errors print: with no JSON tags, their keys are the Go field names, and
// a limited level's nominalConcurrencyShares is a number (0 if unset).
type (
	priorityLevelSpecJSON struct {
		Type    flowcontrolv1.PriorityLevelEnablement
		Limited *limitedJSON
		Exempt  *exemptJSON
	}
	limitedJSON struct {
		NominalConcurrencyShares int32
		LimitResponse            limitResponseJSON
		LendablePercent          *int32
		BorrowingLimitPercent    *int32
	}
	limitResponseJSON struct {
		Type    flowcontrolv1.LimitResponseType
		Queuing *queuingJSON
	}
	queuingJSON struct{ Queues, HandSize, QueueLengthLimit int32 }
	exemptJSON  struct{ NominalConcurrencyShares, LendablePercent *int32 }
)

func internalPriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec) *priorityLevelSpecJSON {
	out := &priorityLevelSpecJSON{Type: spec.Type, Exempt: (*exemptJSON)(spec.Exempt)}
	if l := spec.Limited; l != nil {
		out.Limited = &limitedJSON{
			NominalConcurrencyShares: ptr.Deref(l.NominalConcurrencyShares, 0),
			LimitResponse:            limitResponseJSON{Type: l.LimitResponse.Type, Queuing: (*queuingJSON)(l.LimitResponse.Queuing)},
			LendablePercent:          l.LendablePercent,
			BorrowingLimitPercent:    l.BorrowingLimitPercent,
		}
	}
	return out
}
