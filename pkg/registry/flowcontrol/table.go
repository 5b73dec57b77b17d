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
	"cmp"
	"context"
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// flowSchemaTable is upstream's printFlowSchema: NAME, PRIORITYLEVEL,
// MATCHINGPRECEDENCE, DISTINGUISHERMETHOD ("<none>" without one), AGE, and
// MISSINGPL, the status of the Dangling condition ("?" without one).
var flowSchemaTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
		{Name: "MatchingPrecedence", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]},
		{Name: "DistinguisherMethod", Type: "string", Description: flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]},
		registry.AgeColumn,
		{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
	},
	Cells: func(obj runtime.Object) []any {
		fs := obj.(*flowcontrolv1.FlowSchema)
		method := "<none>"
		if fs.Spec.DistinguisherMethod != nil {
			method = string(fs.Spec.DistinguisherMethod.Type)
		}
		missing := "?"
		for _, c := range fs.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
				missing = string(c.Status)
				break
			}
		}
		return []any{fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), method, registry.Age(fs.CreationTimestamp), missing}
	},
}

// sortedFlowSchemaTable prints a list of flow schemas as upstream's
// printFlowSchemaList does: by matching precedence, then by name.
type sortedFlowSchemaTable struct {
	registry.Table
}

var _ rest.TableConvertor = sortedFlowSchemaTable{}

func (t sortedFlowSchemaTable) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	if list, ok := object.(*flowcontrolv1.FlowSchemaList); ok {
		sorted := *list
		sorted.Items = slices.Clone(list.Items)
		slices.SortFunc(sorted.Items, func(a, b flowcontrolv1.FlowSchema) int {
			return cmp.Or(cmp.Compare(a.Spec.MatchingPrecedence, b.Spec.MatchingPrecedence), cmp.Compare(a.Name, b.Name))
		})
		object = &sorted
	}
	return t.Table.ConvertToTable(ctx, object, tableOptions)
}

// priorityLevelTable is upstream's printPriorityLevelConfiguration: NAME,
// TYPE, NOMINALCONCURRENCYSHARES, QUEUES, HANDSIZE, QUEUELENGTHLIMIT
// ("<none>" where the level is not limited, or does not queue), AGE.
// Upstream's cells are int32s: the same numbers in a response.
var priorityLevelTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
		{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
		{Name: "Queues", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]},
		{Name: "HandSize", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]},
		{Name: "QueueLengthLimit", Type: "string", Description: flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		pl := obj.(*flowcontrolv1.PriorityLevelConfiguration)
		shares, queues, handSize, queueLengthLimit := any("<none>"), any("<none>"), any("<none>"), any("<none>")
		if l := pl.Spec.Limited; l != nil {
			shares = int64(ptr.Deref(l.NominalConcurrencyShares, 0))
			if q := l.LimitResponse.Queuing; q != nil {
				queues, handSize, queueLengthLimit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []any{pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLengthLimit, registry.Age(pl.CreationTimestamp)}
	},
}
