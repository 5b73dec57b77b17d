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

package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
)

func TestDecodeFlowSchemaDefaults(t *testing.T) {
	for _, tt := range []struct {
		name, precedence string
		want             int32
	}{{"precedence 1000", "", 1000}, {"precedence kept", `,"matchingPrecedence":200`, 200}} {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, flowcontrolv1.SchemeGroupVersion,
				`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"web"},"spec":{"priorityLevelConfiguration":{"name":"workload"}`+tt.precedence+`}}`)
			if got := obj.(*flowcontrolv1.FlowSchema).Spec.MatchingPrecedence; got != tt.want {
				t.Errorf("matchingPrecedence: got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDecodePriorityLevelDefaults(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want flowcontrolv1.PriorityLevelConfigurationSpec
	}{
		{
			name: "limited, queuing",
			spec: `{"type":"Limited","limited":{"limitResponse":{"type":"Queue","queuing":{}}}}`,
			want: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](30), LendablePercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue", Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}},
			}},
		},
		{
			name: "limited, explicit values kept, 0 shares too",
			spec: `{"type":"Limited","limited":{"nominalConcurrencyShares":0,"lendablePercent":20,"limitResponse":{"type":"Queue","queuing":{"queues":4,"handSize":2,"queueLengthLimit":9}}}}`,
			want: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](20),
				LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue", Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 2, QueueLengthLimit: 9}},
			}},
		},
		{
			name: "exempt",
			spec: `{"type":"Exempt","exempt":{}}`,
			want: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt", Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0),
			}},
		},
		{name: "neither", spec: `{"type":"Exempt"}`, want: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, flowcontrolv1.SchemeGroupVersion,
				`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"p"},"spec":`+tt.spec+`}`)
			if diff := cmp.Diff(tt.want, obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("list items", func(t *testing.T) {
		obj := decodeDefaulted(t, flowcontrolv1.SchemeGroupVersion,
			`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfigurationList","items":[{"metadata":{"name":"p"},"spec":{"type":"Exempt","exempt":{}}}]}`)
		if items := obj.(*flowcontrolv1.PriorityLevelConfigurationList).Items; len(items) != 1 || items[0].Spec.Exempt.LendablePercent == nil {
			t.Errorf("list items: got %+v, want one defaulted", items)
		}
	})
}
