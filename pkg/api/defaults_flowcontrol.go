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
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The defaults of upstream's pkg/apis/flowcontrol/v1.
const (
	flowSchemaDefaultMatchingPrecedence          int32 = 1000
	priorityLevelDefaultHandSize                 int32 = 8
	priorityLevelDefaultQueues                   int32 = 64
	priorityLevelDefaultQueueLengthLimit         int32 = 50
	priorityLevelDefaultNominalConcurrencyShares int32 = 30
)

// addFlowcontrolDefaults registers upstream's flowcontrol.apiserver.k8s.io/v1
// defaults (k8s.io/kubernetes pkg/apis/flowcontrol/v1, defaults.go and its
// generated defaulters): a flow schema matches at precedence 1000; a
// limited level gets 30 nominal shares and lends none, and its queuing 64
// queues, hands of 8 and queues 50 long; an exempt level has 0 nominal
// shares and lends none. An explicit 0 stays 0 (v1's fields are pointers).
func addFlowcontrolDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&flowcontrolv1.FlowSchema{}, func(obj any) {
		if spec := &obj.(*flowcontrolv1.FlowSchema).Spec; spec.MatchingPrecedence == 0 {
			spec.MatchingPrecedence = flowSchemaDefaultMatchingPrecedence
		}
	})
	s.AddTypeDefaultingFunc(&flowcontrolv1.PriorityLevelConfiguration{}, func(obj any) {
		defaultPriorityLevelSpec(&obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec)
	})
}

// flowcontrolDefaultedLists are the lists whose items addFlowcontrolDefaults defaults.
var flowcontrolDefaultedLists = []runtime.Object{&flowcontrolv1.FlowSchemaList{}, &flowcontrolv1.PriorityLevelConfigurationList{}}

func defaultPriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec) {
	if l := spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = ptr.To(priorityLevelDefaultNominalConcurrencyShares)
		}
		if l.LendablePercent == nil {
			l.LendablePercent = ptr.To[int32](0)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = priorityLevelDefaultHandSize
			}
			if q.Queues == 0 {
				q.Queues = priorityLevelDefaultQueues
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = priorityLevelDefaultQueueLengthLimit
			}
		}
	}
	if e := spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To[int32](0)
		}
	}
}
