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
	"testing"

	"github.com/google/go-cmp/cmp"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestFlowSchemaTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "no condition", Obj: validSchema("web"), Want: []any{"web", "workload", int64(500), "ByUser", "<unknown>", "?"}},
		{
			Name: "dangling, no distinguisher",
			Obj: registrytest.Modified(validSchema("web"), func(fs *flowcontrolv1.FlowSchema) {
				fs.Spec.DistinguisherMethod = nil
				fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Other", Status: "True"}, {Type: "Dangling", Status: "False"}}
			}),
			Want: []any{"web", "workload", int64(500), "<none>", "<unknown>", "False"},
		},
	}
	store := registrytest.REST(t, NewStorage, "flowschemas")
	registrytest.CheckTable(t, store, []string{"Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age", "MissingPL"}, tests...)
}

// TestFlowSchemaListTable: a list's rows are in matching order, by
// precedence and then by name, as upstream's printer sorts them.
func TestFlowSchemaListTable(t *testing.T) {
	withPrecedence := func(name string, precedence int32) flowcontrolv1.FlowSchema {
		fs := validSchema(name)
		fs.Spec.MatchingPrecedence = precedence
		return *fs
	}
	list := &flowcontrolv1.FlowSchemaList{Items: []flowcontrolv1.FlowSchema{
		withPrecedence("global-default", 9900), withPrecedence("b", 800), withPrecedence("exempt", 1), withPrecedence("a", 800),
	}}
	table, err := registrytest.REST(t, NewStorage, "flowschemas").ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatalf("ConvertToTable: got error %v, want none", err)
	}
	var names []any
	for _, row := range table.Rows {
		names = append(names, row.Cells[0])
	}
	if diff := cmp.Diff([]any{"exempt", "a", "b", "global-default"}, names); diff != "" {
		t.Errorf("row order (-want +got):\n%s", diff)
	}
	if list.Items[0].Name != "global-default" {
		t.Errorf("list after ConvertToTable: first item %q, want the list left as it was", list.Items[0].Name)
	}
}

func TestPriorityLevelTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "queuing", Obj: validLevel("workload"), Want: []any{"workload", "Limited", int64(10), int64(64), int64(8), int64(50), "<unknown>"}},
		{
			Name: "rejecting",
			Obj: registrytest.Modified(validLevel("catch-all"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
				pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](5)
				pl.Spec.Limited.LimitResponse = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
			}),
			Want: []any{"catch-all", "Limited", int64(5), "<none>", "<none>", "<none>", "<unknown>"},
		},
		{Name: "exempt", Obj: exemptLevel("exempt"), Want: []any{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "prioritylevelconfigurations")
	registrytest.CheckTable(t, store, []string{"Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", "Age"}, tests...)
}
