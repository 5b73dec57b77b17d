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
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func exemptLevel(name string) *flowcontrolv1.PriorityLevelConfiguration {
	return registrytest.Modified(validLevel(name), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		pl.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{
			Type:   flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0)},
		}
	})
}

func withQueuing(q flowcontrolv1.QueuingConfiguration) func(*flowcontrolv1.PriorityLevelConfiguration) {
	return func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited.LimitResponse.Queuing = &q }
}

// priorityLevelCases are priority levels and the messages of their
// create, which are kube-apiserver 1.37's: where its declarative
// validation covers an error, the declarative one, with no detail, comes
// last.
func priorityLevelCases() []registrytest.Change[*flowcontrolv1.PriorityLevelConfiguration] {
	return []registrytest.Change[*flowcontrolv1.PriorityLevelConfiguration]{
		{Name: "valid", Obj: validLevel("workload"), Want: []string{}},
		{
			Name: "valid, rejecting, shares 0",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](0)
				pl.Spec.Limited.LimitResponse = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
			}),
			Want: []string{},
		},
		{
			Name: "limited without limited",
			Obj:  registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited = nil }),
			Want: []string{"spec.limited: Required value"},
		},
		{
			Name: "limited with exempt",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{}
			}),
			Want: []string{"spec.exempt: Forbidden"},
		},
		{
			Name: "exempt but for the level exempt",
			Obj:  exemptLevel("workload"),
			Want: []string{"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'"},
		},
		{
			Name: "no type",
			Obj:  registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Type = "" }),
			Want: []string{"spec.limited: Forbidden", "spec.type: Required value"},
		},
		{
			Name: "unknown type",
			Obj:  registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Type = "Sometimes" }),
			Want: []string{`spec.type: Unsupported value: "Sometimes": supported values: "Exempt", "Limited"`, "spec.limited: Forbidden"},
		},
		{
			Name: "negative shares and percentages",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				l := pl.Spec.Limited
				l.NominalConcurrencyShares, l.LendablePercent, l.BorrowingLimitPercent = ptr.To[int32](-1), ptr.To[int32](101), ptr.To[int32](-1)
			}),
			Want: []string{
				"spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
				"spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
				"spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer",
			},
		},
		{
			Name: "rejecting with queuing",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.LimitResponse.Type = flowcontrolv1.LimitResponseTypeReject
			}),
			Want: []string{"spec.limited.limitResponse.queuing: Forbidden"},
		},
		{
			Name: "queuing without queuing",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.LimitResponse.Queuing = nil
			}),
			Want: []string{"spec.limited.limitResponse.queuing: Required value"},
		},
		{
			Name: "unknown limit response",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.LimitResponse.Type = "Drop"
			}),
			Want: []string{`spec.limited.limitResponse.type: Unsupported value: "Drop": supported values: "Queue", "Reject"`, "spec.limited.limitResponse.queuing: Forbidden"},
		},
		{
			Name: "zero queuing",
			Obj:  registrytest.Modified(validLevel("workload"), withQueuing(flowcontrolv1.QueuingConfiguration{})),
			Want: []string{
				"spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive",
				"spec.limited.limitResponse.queuing.queues: Invalid value: 0: must be positive",
				"spec.limited.limitResponse.queuing.handSize: Invalid value: 0: must be positive",
			},
		},
		{
			Name: "a hand larger than the deck",
			Obj:  registrytest.Modified(validLevel("workload"), withQueuing(flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 5, QueueLengthLimit: 1})),
			Want: []string{"spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)"},
		},
		{
			Name: "too many queues",
			Obj:  registrytest.Modified(validLevel("workload"), withQueuing(flowcontrolv1.QueuingConfiguration{Queues: 10000001, HandSize: 1, QueueLengthLimit: 1})),
			Want: []string{"spec.limited.limitResponse.queuing.queues: Invalid value: 10000001: must not be greater than 10000000"},
		},
		{
			Name: "too much entropy",
			Obj:  registrytest.Modified(validLevel("workload"), withQueuing(flowcontrolv1.QueuingConfiguration{Queues: 10000000, HandSize: 10, QueueLengthLimit: 1})),
			Want: []string{"spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 10000000 and handSize 10 should not be greater than 60"},
		},
		{
			Name: "v1beta3's round-trip annotation",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Annotations = map[string]string{"flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": ""}
			}),
			Want: []string{"metadata.annotations: Forbidden: annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"},
		},
		{
			Name: "exempt may change its exempt field",
			Obj: registrytest.Modified(exemptLevel("exempt"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Exempt = &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](10), LendablePercent: ptr.To[int32](50)}
			}),
			Want: []string{},
		},
		{
			// The values are upstream's internal specs, keyed by Go field names.
			Name: "exempt may not change the rest",
			Obj: registrytest.Modified(exemptLevel("exempt"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited = &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}
			}),
			Want: []string{
				`spec: Invalid value: {"Type":"Exempt","Limited":{"NominalConcurrencyShares":0,"LimitResponse":{"Type":"Reject","Queuing":null},"LendablePercent":null,"BorrowingLimitPercent":null},` +
					`"Exempt":{"NominalConcurrencyShares":0,"LendablePercent":0}}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value`,
				"spec.limited: Forbidden",
			},
		},
		{
			Name: "catch-all's spec is fixed",
			Obj: registrytest.Modified(validLevel("catch-all"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](6)
				pl.Spec.Limited.LimitResponse = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
			}),
			Want: []string{`spec: Invalid value: {"Type":"Limited","Limited":{"NominalConcurrencyShares":6,"LimitResponse":{"Type":"Reject","Queuing":null},"LendablePercent":0,"BorrowingLimitPercent":null},"Exempt":null}: ` +
				`spec of 'catch-all' must equal the fixed value`},
		},
		{
			Name: "status conditions",
			Obj: registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "ConcurrencyShared"}, {Type: "ConcurrencyShared"}}
			}),
			Want: []string{`status.conditions[1].type: Duplicate value: "ConcurrencyShared"`},
		},
	}
}

func TestValidatePriorityLevel(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "prioritylevelconfigurations")
	registrytest.ValidateChanges(t, store.CreateStrategy, registrytest.Messages, priorityLevelCases())
}

// priorityLevelUpdateCases are updates and their messages: an update that
// leaves the spec as it was gets no declarative errors, so the handwritten
// ones show; one that changes it gets them for the part it changes.
func priorityLevelUpdateCases() []registrytest.Change[*flowcontrolv1.PriorityLevelConfiguration] {
	withoutLimited := registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited = nil })
	rejecting := registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		pl.Spec.Limited.LimitResponse.Type = flowcontrolv1.LimitResponseTypeReject
	})
	return []registrytest.Change[*flowcontrolv1.PriorityLevelConfiguration]{
		{
			Name: "limited still missing",
			Old:  withoutLimited,
			Obj:  registrytest.Modified(withoutLimited, func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Labels = map[string]string{"a": "b"} }),
			Want: []string{"spec.limited: Required value: must not be empty when type is Limited"},
		},
		{
			Name: "limited removed",
			Old:  validLevel("workload"),
			Obj:  withoutLimited,
			Want: []string{"spec.limited: Required value"},
		},
		{
			Name: "still rejecting with queuing, shares changed",
			Old:  rejecting,
			Obj: registrytest.Modified(rejecting, func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](3)
			}),
			Want: []string{"spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited"},
		},
		{
			Name: "queuing changed while rejecting",
			Old:  rejecting,
			Obj:  registrytest.Modified(rejecting, withQueuing(flowcontrolv1.QueuingConfiguration{Queues: 2, HandSize: 1, QueueLengthLimit: 1})),
			Want: []string{"spec.limited.limitResponse.queuing: Forbidden"},
		},
	}
}

func TestValidatePriorityLevelUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "prioritylevelconfigurations")
	registrytest.ValidateUpdateChanges(t, store.UpdateStrategy, registrytest.Messages, priorityLevelUpdateCases())
}

// TestMandatoryPriorityLevels: the mandatory levels, and the suggested
// ones, are valid as k8s.io/apiserver defines them, and are left as they
// are by the defaults.
func TestMandatoryPriorityLevels(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "prioritylevelconfigurations")
	for _, pl := range append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, bootstrap.MandatoryPriorityLevelConfigurations...), bootstrap.SuggestedPriorityLevelConfigurations...) {
		if got := registrytest.Messages(store.CreateStrategy.Validate(context.Background(), pl.DeepCopy())); len(got) != 0 {
			t.Errorf("%s: got errors %v, want none", pl.Name, got)
		}
	}
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		if diff := cmp.Diff(pl, mandatoryPriorityLevels[pl.Name]); diff != "" {
			t.Errorf("%s defaulted (-bootstrap +defaulted):\n%s", pl.Name, diff)
		}
	}
}
