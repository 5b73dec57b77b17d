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

package bootstrap

import (
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	flowcontrolbootstrap "k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/kubernetes/fake"
	flowcontrollisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/miniapiserver/miniapiserver/pkg/api"
)

// stored returns bootstrap FlowSchema name as stored (defaulted), with
// generation, the autoupdate-spec annotation (none if ""), and its
// matching precedence changed if changed.
func stored(t *testing.T, name string, generation int64, annotation string, changed bool) *flowcontrolv1.FlowSchema {
	t.Helper()
	i := slices.IndexFunc(slices.Concat(flowcontrolbootstrap.MandatoryFlowSchemas, flowcontrolbootstrap.SuggestedFlowSchemas),
		func(fs *flowcontrolv1.FlowSchema) bool { return fs.Name == name })
	if i < 0 {
		t.Fatalf("no bootstrap FlowSchema %s", name)
	}
	fs := slices.Concat(flowcontrolbootstrap.MandatoryFlowSchemas, flowcontrolbootstrap.SuggestedFlowSchemas)[i].DeepCopy()
	api.Scheme.Default(fs)
	fs.Generation, fs.Annotations = generation, nil
	if annotation != "" {
		fs.Annotations = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: annotation}
	}
	if changed {
		fs.Spec.MatchingPrecedence++
	}
	return fs
}

// TestEnsureFlowSchemas: upstream's ensurer's cases, one FlowSchema each:
// what it creates, puts back, marks, leaves alone and deletes.
func TestEnsureFlowSchemas(t *testing.T) {
	unwanted := func(annotation string) *flowcontrolv1.FlowSchema {
		fs := stored(t, "global-default", 1, annotation, false)
		fs.Name = "gone-" + annotation
		return fs
	}
	for _, tc := range []struct {
		name, fs string
		current  *flowcontrolv1.FlowSchema
		// want is the FlowSchema after: nil if deleted or never made.
		want *flowcontrolv1.FlowSchema
	}{
		{name: "missing mandatory: created", fs: "exempt", want: stored(t, "exempt", 0, "true", false)},
		{name: "missing suggested: created", fs: "global-default", want: stored(t, "global-default", 0, "true", false)},
		{name: "mandatory changed: put back, marked", fs: "catch-all", current: stored(t, "catch-all", 2, "false", true),
			want: stored(t, "catch-all", 2, "true", false)},
		{name: "suggested changed, marked false: left", fs: "global-default", current: stored(t, "global-default", 2, "false", true),
			want: stored(t, "global-default", 2, "false", true)},
		{name: "suggested changed, marked true: put back", fs: "global-default", current: stored(t, "global-default", 2, "true", true),
			want: stored(t, "global-default", 2, "true", false)},
		{name: "suggested changed, unmarked, generation 1: put back, marked", fs: "global-default",
			current: stored(t, "global-default", 1, "", true), want: stored(t, "global-default", 1, "true", false)},
		{name: "suggested changed, unmarked, generation 2: marked false", fs: "global-default",
			current: stored(t, "global-default", 2, "", true), want: stored(t, "global-default", 2, "false", true)},
		{name: "suggested as made: left", fs: "global-default", current: stored(t, "global-default", 1, "true", false),
			want: stored(t, "global-default", 1, "true", false)},
		{name: "no longer bootstrap, marked true: deleted", fs: "gone-true", current: unwanted("true")},
		{name: "no longer bootstrap, marked false: left", fs: "gone-false", current: unwanted("false"), want: unwanted("false")},
		{name: "the user's: left", fs: "gone-", current: unwanted(""), want: unwanted("")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if tc.current != nil {
				if _, err := client.FlowcontrolV1().FlowSchemas().Create(t.Context(), tc.current, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := indexer.Add(tc.current); err != nil {
					t.Fatal(err)
				}
			}
			ops := configOps[*flowcontrolv1.FlowSchema]{client: client.FlowcontrolV1().FlowSchemas(), lister: flowcontrollisters.NewFlowSchemaLister(indexer)}
			var err error
			for _, boot := range flowcontrolbootstrap.MandatoryFlowSchemas {
				if boot.Name == tc.fs && err == nil {
					err = ensureOne(t.Context(), ops, boot, true)
				}
			}
			for _, boot := range flowcontrolbootstrap.SuggestedFlowSchemas {
				if boot.Name == tc.fs && err == nil {
					err = ensureOne(t.Context(), ops, boot, false)
				}
			}
			if err == nil {
				err = removeUnwanted(t.Context(), ops, flowcontrolbootstrap.MandatoryFlowSchemas, flowcontrolbootstrap.SuggestedFlowSchemas)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := client.FlowcontrolV1().FlowSchemas().Get(t.Context(), tc.fs, metav1.GetOptions{})
			switch {
			case tc.want == nil && err == nil:
				t.Errorf("FlowSchema %s exists, want none", tc.fs)
			case tc.want != nil && err != nil:
				t.Errorf("FlowSchema %s: %v", tc.fs, err)
			case tc.want != nil:
				api.Scheme.Default(got)
				if !apiequality.Semantic.DeepEqual(got.Spec, tc.want.Spec) || !apiequality.Semantic.DeepEqual(got.Annotations, tc.want.Annotations) {
					t.Errorf("FlowSchema %s: annotations %v, spec %+v; want %v, %+v", tc.fs, got.Annotations, got.Spec, tc.want.Annotations, tc.want.Spec)
				}
			}
		})
	}
}

// TestDanglingWritten: a stop waits until each FlowSchema's Dangling
// condition says whether its priority level exists.
func TestDanglingWritten(t *testing.T) {
	withCondition := func(name, level string, status flowcontrolv1.ConditionStatus) *flowcontrolv1.FlowSchema {
		fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: level}}}
		if status != "" {
			fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: status}}
		}
		return fs
	}
	for _, tc := range []struct {
		name    string
		schemas []*flowcontrolv1.FlowSchema
		want    bool
	}{
		{name: "none", want: true},
		{name: "found, written", schemas: []*flowcontrolv1.FlowSchema{withCondition("a", "exists", flowcontrolv1.ConditionFalse)}, want: true},
		{name: "dangling, written", schemas: []*flowcontrolv1.FlowSchema{withCondition("a", "missing", flowcontrolv1.ConditionTrue)}, want: true},
		{name: "not yet written", schemas: []*flowcontrolv1.FlowSchema{withCondition("a", "exists", "")}},
		{name: "written before its level was made", schemas: []*flowcontrolv1.FlowSchema{withCondition("a", "exists", flowcontrolv1.ConditionTrue)}},
		{name: "one of two not written", schemas: []*flowcontrolv1.FlowSchema{
			withCondition("a", "exists", flowcontrolv1.ConditionFalse), withCondition("b", "missing", "")}},
	} {
		schemas := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		for _, fs := range tc.schemas {
			if err := schemas.Add(fs); err != nil {
				t.Fatal(err)
			}
		}
		levels := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
		if err := levels.Add(&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "exists"}}); err != nil {
			t.Fatal(err)
		}
		got, err := danglingWritten(flowcontrollisters.NewFlowSchemaLister(schemas), flowcontrollisters.NewPriorityLevelConfigurationLister(levels))
		if err != nil || got != tc.want {
			t.Errorf("%s: danglingWritten %t, %v; want %t", tc.name, got, err, tc.want)
		}
	}
}
