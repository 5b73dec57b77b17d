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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

var storageKeys = []string{"flowschemas", "flowschemas/status", "prioritylevelconfigurations", "prioritylevelconfigurations/status"}

// validSchema is a flow schema as defaulted, sending the authenticated
// users' resource requests to the level "workload".
func validSchema(name string) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-1", ResourceVersion: "1"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload"},
			MatchingPrecedence:         500,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "system:authenticated"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{
					{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}},
				},
			}},
		},
	}
}

// validLevel is a limited priority level that queues, as defaulted.
func validLevel(name string) *flowcontrolv1.PriorityLevelConfiguration {
	return &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: "uid-1", ResourceVersion: "1"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](10),
				LendablePercent:          ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type:    flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50},
				},
			},
		},
	}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "flowcontrol", storageKeys...)
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	for _, tt := range []struct{ resource, singular string }{
		{"flowschemas", "flowschema"}, {"prioritylevelconfigurations", "prioritylevelconfiguration"},
	} {
		t.Run(tt.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, tt.resource)
			registrytest.CheckShape(t, store, registrytest.Shape{Resource: flowcontrolv1.Resource(tt.resource), Singular: tt.singular})
			if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "status"), store.GetResetFields(), equal); diff != "" {
				t.Errorf("reset fields (-want +got):\n%s", diff)
			}
			status, ok := storages[tt.resource+"/status"].(*registry.StatusREST)
			if !ok {
				t.Fatalf("storage %q: got %T, want *registry.StatusREST", tt.resource+"/status", storages[tt.resource+"/status"])
			}
			// As upstream's: the status endpoint owns no metadata either.
			if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "metadata", "spec"), status.GetResetFields(), equal); diff != "" {
				t.Errorf("status reset fields (-want +got):\n%s", diff)
			}
		})
	}
	var _ rest.StandardStorage = registrytest.REST(t, NewStorage, "flowschemas")
}

func TestFieldSelectors(t *testing.T) {
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "flowschemas"), validSchema("web"), fields.Set{"metadata.name": "web"})
	registrytest.CheckFields(t, registrytest.REST(t, NewStorage, "prioritylevelconfigurations"), validLevel("workload"), fields.Set{"metadata.name": "workload"})
}

// create creates obj through the store of resource on a MemStorage, and
// returns what the create returned, or its error's message.
func create(t *testing.T, resource string, obj runtime.Object) (runtime.Object, string) {
	t.Helper()
	storages := registrytest.Storages(t, NewStorage, resource, storageKeys...)
	ctx := genericapirequest.WithNamespace(context.Background(), metav1.NamespaceNone)
	out, err := storages[resource].(rest.Creater).Create(ctx, obj, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		return nil, err.Error()
	}
	return out, ""
}

// TestCreate: a create clears status and starts the generation at 1; an
// invalid object is refused with upstream's message.
func TestCreate(t *testing.T) {
	schema := registrytest.Modified(validSchema("web"), func(fs *flowcontrolv1.FlowSchema) {
		fs.UID, fs.ResourceVersion, fs.Generation = "", "", 7
		fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue}}
	})
	out, msg := create(t, "flowschemas", schema)
	if msg != "" {
		t.Fatalf("create of a flow schema: got error %s, want none", msg)
	}
	if got := out.(*flowcontrolv1.FlowSchema); got.Status.Conditions != nil || got.Generation != 1 {
		t.Errorf("flow schema after create: got status %+v, generation %d, want no status, generation 1", got.Status, got.Generation)
	}
	level := registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		pl.UID, pl.ResourceVersion, pl.Generation = "", "", 7
		pl.Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "ConcurrencyShared", Status: flowcontrolv1.ConditionTrue}}
	})
	out, msg = create(t, "prioritylevelconfigurations", level)
	if msg != "" {
		t.Fatalf("create of a priority level: got error %s, want none", msg)
	}
	if got := out.(*flowcontrolv1.PriorityLevelConfiguration); got.Status.Conditions != nil || got.Generation != 1 {
		t.Errorf("priority level after create: got status %+v, generation %d, want no status, generation 1", got.Status, got.Generation)
	}

	// The messages are kube-apiserver 1.37.2's for the same requests.
	_, msg = create(t, "flowschemas", registrytest.Modified(validSchema("web"), func(fs *flowcontrolv1.FlowSchema) {
		fs.UID, fs.ResourceVersion, fs.Spec.MatchingPrecedence = "", "", -3
	}))
	if want := `FlowSchema.flowcontrol.apiserver.k8s.io "web" is invalid: spec.matchingPrecedence: Invalid value: -3: must be a positive value`; msg != want {
		t.Errorf("create with a negative precedence: got\n%s\nwant\n%s", msg, want)
	}
	_, msg = create(t, "prioritylevelconfigurations", registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		pl.UID, pl.ResourceVersion, pl.Spec.Limited = "", "", nil
	}))
	if want := `PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "workload" is invalid: spec.limited: Required value`; msg != want {
		t.Errorf("create of a limited level without limited: got\n%s\nwant\n%s", msg, want)
	}
}

// TestUpdateSchemaThroughStores runs updates through the generic stores of
// flowschemas and of their status.
func TestUpdateSchemaThroughStores(t *testing.T) {
	dangling := flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{
		{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse, Reason: "Found", LastTransitionTime: metav1.Unix(1, 0)},
	}}
	tests := []struct {
		name           string
		status         bool
		newStatus      flowcontrolv1.FlowSchemaStatus
		wantPrecedence int32
		wantStatus     flowcontrolv1.FlowSchemaStatus
		wantLabels     map[string]string
		wantGeneration int64
		wantInvalid    []string
	}{
		{
			name: "main: spec and labels change, status kept", newStatus: dangling,
			wantPrecedence: 600, wantLabels: map[string]string{"new": "label"}, wantGeneration: 2,
		},
		{name: "status: status changes, spec and metadata kept", status: true, newStatus: dangling, wantPrecedence: 500, wantStatus: dangling, wantGeneration: 1},
		{
			name: "status: conditions need a type, each once", status: true,
			newStatus:   flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling"}, {Type: "Dangling"}, {}}},
			wantInvalid: []string{"status.conditions[1].type: FieldValueDuplicate", "status.conditions[2].type: FieldValueRequired"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "flowschemas", tt.status,
				registrytest.Modified(validSchema("web"), func(fs *flowcontrolv1.FlowSchema) { fs.Generation = 1 }),
				func(fs *flowcontrolv1.FlowSchema) {
					fs.Spec.MatchingPrecedence = 600
					fs.Labels = map[string]string{"new": "label"}
					fs.Status = tt.newStatus
				})
			if registrytest.CheckInvalid(t, err, tt.wantInvalid) {
				return
			}
			if got.Spec.MatchingPrecedence != tt.wantPrecedence || got.Generation != tt.wantGeneration {
				t.Errorf("precedence, generation: got %d, %d, want %d, %d", got.Spec.MatchingPrecedence, got.Generation, tt.wantPrecedence, tt.wantGeneration)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateLevelThroughStores runs updates through the generic stores of
// prioritylevelconfigurations and of their status.
func TestUpdateLevelThroughStores(t *testing.T) {
	shared := flowcontrolv1.PriorityLevelConfigurationStatus{Conditions: []flowcontrolv1.PriorityLevelConfigurationCondition{
		{Type: "ConcurrencyShared", Status: flowcontrolv1.ConditionTrue, LastTransitionTime: metav1.Unix(1, 0)},
	}}
	tests := []struct {
		name           string
		status         bool
		wantShares     int32
		wantStatus     flowcontrolv1.PriorityLevelConfigurationStatus
		wantAnnotation map[string]string
		wantGeneration int64
	}{
		{name: "main: spec and annotations change, status kept", wantShares: 20, wantAnnotation: map[string]string{"a": "b"}, wantGeneration: 3},
		{name: "status: status changes, spec and metadata kept", status: true, wantShares: 10, wantStatus: shared, wantGeneration: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "prioritylevelconfigurations", tt.status,
				registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Generation = 2 }),
				func(pl *flowcontrolv1.PriorityLevelConfiguration) {
					pl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](20)
					pl.Annotations = map[string]string{"a": "b"}
					pl.Status = shared
				})
			if err != nil {
				t.Fatalf("update: got error %v, want none", err)
			}
			if got := *got.Spec.Limited.NominalConcurrencyShares; got != tt.wantShares {
				t.Errorf("nominalConcurrencyShares: got %d, want %d", got, tt.wantShares)
			}
			if got.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", got.Generation, tt.wantGeneration)
			}
			if diff := cmp.Diff(tt.wantAnnotation, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrepareForUpdate: the generation counts changes of spec only, and
// an update keeps status.
func TestPrepareForUpdate(t *testing.T) {
	oldSchema := registrytest.Modified(validSchema("web"), func(fs *flowcontrolv1.FlowSchema) {
		fs.Generation = 4
		fs.Status.Conditions = []flowcontrolv1.FlowSchemaCondition{{Type: "Dangling", Status: flowcontrolv1.ConditionTrue}}
	})
	registrytest.CheckGenerations(t, registrytest.REST(t, NewStorage, "flowschemas").UpdateStrategy, oldSchema, []registrytest.Generation[*flowcontrolv1.FlowSchema]{
		{Name: "schema labels", Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Labels = map[string]string{"a": "b"} }, Want: 4},
		{Name: "schema status", Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Status.Conditions = nil }, Want: 4},
		{Name: "schema spec", Mutate: func(fs *flowcontrolv1.FlowSchema) { fs.Spec.DistinguisherMethod = nil }, Want: 5},
	}, func(t *testing.T, fs *flowcontrolv1.FlowSchema) {
		if diff := cmp.Diff(oldSchema.Status, fs.Status); diff != "" {
			t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
		}
	})
	oldLevel := registrytest.Modified(validLevel("workload"), func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Generation = 1 })
	registrytest.CheckGenerations(t, registrytest.REST(t, NewStorage, "prioritylevelconfigurations").UpdateStrategy, oldLevel, []registrytest.Generation[*flowcontrolv1.PriorityLevelConfiguration]{
		{Name: "level annotations", Mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Annotations = map[string]string{"a": "b"} }, Want: 1},
		{Name: "level status", Mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) {
			pl.Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "ConcurrencyShared"}}
		}, Want: 1},
		{Name: "level spec", Mutate: func(pl *flowcontrolv1.PriorityLevelConfiguration) { pl.Spec.Limited.LimitResponse.Queuing.Queues = 32 }, Want: 2},
	}, func(t *testing.T, pl *flowcontrolv1.PriorityLevelConfiguration) {
		if pl.Status.Conditions != nil {
			t.Errorf("status after PrepareForUpdate: got %+v, want the old one (none)", pl.Status)
		}
	})
}
