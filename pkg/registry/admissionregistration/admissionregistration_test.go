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

package admissionregistration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// kinds are the six resources, each with a valid object and a change of
// what upstream counts in metadata.generation.
var kinds = []struct {
	resource   string
	singular   string
	valid      func() runtime.Object
	changeSpec func(obj runtime.Object)
}{
	{
		resource: "validatingwebhookconfigurations", singular: "validatingwebhookconfiguration",
		valid: func() runtime.Object { return validatingConfiguration(validWebhook()) },
		changeSpec: func(obj runtime.Object) {
			obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[0].TimeoutSeconds = ptr.To[int32](5)
		},
	},
	{
		resource: "mutatingwebhookconfigurations", singular: "mutatingwebhookconfiguration",
		valid: func() runtime.Object { return mutatingConfiguration(validWebhook()) },
		changeSpec: func(obj runtime.Object) {
			obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[0].TimeoutSeconds = ptr.To[int32](5)
		},
	},
	{
		resource: "validatingadmissionpolicies", singular: "validatingadmissionpolicy",
		valid: func() runtime.Object { return validPolicy() },
		changeSpec: func(obj runtime.Object) {
			obj.(*admissionregistrationv1.ValidatingAdmissionPolicy).Spec.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
		},
	},
	{
		resource: "validatingadmissionpolicybindings", singular: "validatingadmissionpolicybinding",
		valid: func() runtime.Object { return validBinding() },
		changeSpec: func(obj runtime.Object) {
			obj.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.PolicyName = "other"
		},
	},
	{
		resource: "mutatingadmissionpolicies", singular: "mutatingadmissionpolicy",
		valid: func() runtime.Object { return validMutatingPolicy() },
		changeSpec: func(obj runtime.Object) {
			obj.(*admissionregistrationv1.MutatingAdmissionPolicy).Spec.ReinvocationPolicy = admissionregistrationv1.IfNeededReinvocationPolicy
		},
	},
	{
		resource: "mutatingadmissionpolicybindings", singular: "mutatingadmissionpolicybinding",
		valid: func() runtime.Object { return validMutatingBinding() },
		changeSpec: func(obj runtime.Object) {
			obj.(*admissionregistrationv1.MutatingAdmissionPolicyBinding).Spec.PolicyName = "other"
		},
	},
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "admissionregistration",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "mutatingwebhookconfigurations",
		"validatingadmissionpolicies", "validatingadmissionpolicies/status", "validatingadmissionpolicybindings", "validatingwebhookconfigurations",
	)
	if _, ok := storages["validatingadmissionpolicies/status"].(*registry.StatusREST); !ok {
		t.Errorf("storage %q: got %T, want *registry.StatusREST", "validatingadmissionpolicies/status", storages["validatingadmissionpolicies/status"])
	}
	for _, kind := range kinds {
		t.Run(kind.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, kind.resource)
			// Upstream gives these types no short names.
			registrytest.CheckShape(t, store, registrytest.Shape{Resource: admissionregistrationv1.Resource(kind.resource), Singular: kind.singular})
			if diff := cmp.Diff([]string{"api-extensions"}, store.Categories()); diff != "" {
				t.Errorf("categories (-want +got):\n%s", diff)
			}
			if errs := store.CreateStrategy.Validate(context.Background(), kind.valid()); len(errs) != 0 {
				t.Errorf("Validate of a valid object: got %v, want none", errs)
			}
		})
	}
}

func TestGeneration(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, kind.resource)
			obj := kind.valid()
			setGeneration(obj, 7)
			store.CreateStrategy.PrepareForCreate(context.Background(), obj)
			if got := generation(obj); got != 1 {
				t.Errorf("generation after PrepareForCreate: got %d, want 1", got)
			}

			old := kind.valid()
			setGeneration(old, 3)
			tests := []struct {
				name   string
				mutate func(runtime.Object)
				want   int64
			}{
				{name: "labels", mutate: func(obj runtime.Object) { mustAccessor(t, obj).SetLabels(map[string]string{"a": "b"}) }, want: 3},
				{name: "spec", mutate: kind.changeSpec, want: 4},
			}
			for _, tt := range tests {
				obj := old.DeepCopyObject()
				tt.mutate(obj)
				store.UpdateStrategy.PrepareForUpdate(context.Background(), obj, old)
				if got := generation(obj); got != tt.want {
					t.Errorf("%s changed: generation got %d, want %d", tt.name, got, tt.want)
				}
			}
		})
	}
}

func mustAccessor(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("meta.Accessor: %v", err)
	}
	return m
}

func generation(obj runtime.Object) int64 {
	m, _ := meta.Accessor(obj)
	return m.GetGeneration()
}

func setGeneration(obj runtime.Object, g int64) {
	m, _ := meta.Accessor(obj)
	m.SetGeneration(g)
}

// TestStaticSuffix: names kube-apiserver keeps for manifest-loaded
// configurations cannot be created, and may stay on update.
func TestStaticSuffix(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind.resource, func(t *testing.T) {
			store := registrytest.REST(t, NewStorage, kind.resource)
			obj := kind.valid()
			mustAccessor(t, obj).SetName("policy.static.k8s.io")
			if diff := cmp.Diff([]string{"metadata.name: Invalid value"}, registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), obj))); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			if errs := store.UpdateStrategy.ValidateUpdate(context.Background(), obj, obj); len(errs) != 0 {
				t.Errorf("ValidateUpdate: got %v, want none", errs)
			}
		})
	}
}

// TestWebhookConfigurationUpdatesAreConditional: as upstream's, an update
// of a webhook configuration must name the resourceVersion it replaces.
func TestWebhookConfigurationUpdatesAreConditional(t *testing.T) {
	for _, resource := range []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"} {
		if registrytest.REST(t, NewStorage, resource).UpdateStrategy.AllowUnconditionalUpdate(context.Background()) {
			t.Errorf("%s: AllowUnconditionalUpdate got true, want false", resource)
		}
	}
}

func TestValidatingPolicyCreateClearsStatus(t *testing.T) {
	p := withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
		p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 4}
	})
	registrytest.REST(t, NewStorage, "validatingadmissionpolicies").CreateStrategy.PrepareForCreate(context.Background(), p)
	if diff := cmp.Diff(admissionregistrationv1.ValidatingAdmissionPolicyStatus{}, p.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
}

func TestValidatingPolicyResetFields(t *testing.T) {
	storages, err := NewStorage(registrytest.NewMemStorage().Options("validatingadmissionpolicies"))
	if err != nil {
		t.Fatalf("NewStorage: got error %v, want none", err)
	}
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	store, status := storages["validatingadmissionpolicies"].(*registry.REST), storages["validatingadmissionpolicies/status"].(*registry.StatusREST)
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	// As upstream's: the status endpoint owns no metadata either.
	if diff := cmp.Diff(registry.Fieldpaths(groupVersion, "spec", "metadata"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

// TestValidatingPolicyUpdateThroughStores runs updates through the generic
// stores of validatingadmissionpolicies and of their status.
func TestValidatingPolicyUpdateThroughStores(t *testing.T) {
	newStatus := admissionregistrationv1.ValidatingAdmissionPolicyStatus{
		ObservedGeneration: 1,
		TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{
			{FieldRef: "spec.validations[0].expression", Warning: "no such field"},
		}},
		Conditions: []metav1.Condition{{Type: "TypeChecked", Status: metav1.ConditionTrue, Reason: "Checked", LastTransitionTime: metav1.Unix(1, 0)}},
	}
	tests := []struct {
		name           string
		status         bool
		newStatus      admissionregistrationv1.ValidatingAdmissionPolicyStatus
		wantFailure    admissionregistrationv1.FailurePolicyType
		wantStatus     admissionregistrationv1.ValidatingAdmissionPolicyStatus
		wantLabels     map[string]string
		wantGeneration int64
		wantInvalid    []string
	}{
		{
			name: "main: spec and labels change, status kept", newStatus: newStatus,
			wantFailure: admissionregistrationv1.Ignore, wantLabels: map[string]string{"new": "label"}, wantGeneration: 2,
		},
		{
			name: "status: status changes, spec and labels kept", status: true, newStatus: newStatus,
			wantFailure: admissionregistrationv1.Fail, wantStatus: newStatus, wantGeneration: 1,
		},
		{
			name: "status: warnings need a warning and a JSONPath", status: true,
			newStatus: admissionregistrationv1.ValidatingAdmissionPolicyStatus{TypeChecking: &admissionregistrationv1.TypeChecking{
				ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0"}, {}},
			}},
			wantInvalid: []string{
				"status.typeChecking.expressionWarnings[0].fieldRef: FieldValueInvalid", "status.typeChecking.expressionWarnings[0].warning: FieldValueRequired",
				"status.typeChecking.expressionWarnings[1].fieldRef: FieldValueRequired", "status.typeChecking.expressionWarnings[1].warning: FieldValueRequired",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, storages, current := registrytest.Seeded(t, NewStorage, "validatingadmissionpolicies", withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Generation = 1 }))
			update := current.DeepCopy()
			update.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
			update.Labels = map[string]string{"new": "label"}
			update.Status = tt.newStatus
			out, err := registrytest.Update(ctx, storages, "validatingadmissionpolicies", tt.status, "replicas", update)
			if registrytest.CheckInvalid(t, err, tt.wantInvalid) {
				return
			}
			got := out.(*admissionregistrationv1.ValidatingAdmissionPolicy)
			if *got.Spec.FailurePolicy != tt.wantFailure {
				t.Errorf("failurePolicy: got %s, want %s", *got.Spec.FailurePolicy, tt.wantFailure)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if got.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", got.Generation, tt.wantGeneration)
			}
		})
	}
}

// checkInvalid fails t unless err is an Invalid status with causes want ("field: type", sorted).
func TestTables(t *testing.T) {
	paramKind := &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	tests := []struct {
		name     string
		resource string
		obj      runtime.Object
		columns  []string
		cells    []any
	}{
		{
			name: "validating webhook configuration", resource: "validatingwebhookconfigurations",
			obj:     validatingConfiguration(validWebhook(), validWebhook()),
			columns: []string{"Name", "Webhooks", "Age"}, cells: []any{"hooks", int64(2), "<unknown>"},
		},
		{
			name: "mutating webhook configuration", resource: "mutatingwebhookconfigurations",
			obj:     mutatingConfiguration(validWebhook()),
			columns: []string{"Name", "Webhooks", "Age"}, cells: []any{"hooks", int64(1), "<unknown>"},
		},
		{
			name: "validating policy without paramKind", resource: "validatingadmissionpolicies", obj: validPolicy(),
			columns: []string{"Name", "Validations", "ParamKind", "Age"}, cells: []any{"replicas", int64(1), "<unset>", "<unknown>"},
		},
		{
			name: "validating policy with paramKind", resource: "validatingadmissionpolicies",
			obj:     withPolicy(func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.ParamKind = paramKind }),
			columns: []string{"Name", "Validations", "ParamKind", "Age"}, cells: []any{"replicas", int64(1), "v1/ConfigMap", "<unknown>"},
		},
		{
			name: "mutating policy", resource: "mutatingadmissionpolicies",
			obj: withMutatingPolicy(func(p *admissionregistrationv1.MutatingAdmissionPolicy) {
				p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Params"}
			}),
			columns: []string{"Name", "Mutations", "ParamKind", "Age"}, cells: []any{"labels", int64(1), "example.com/v1/Params", "<unknown>"},
		},
		{
			name: "validating binding without paramRef", resource: "validatingadmissionpolicybindings", obj: validBinding(),
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"}, cells: []any{"replicas-binding", "replicas", "<unset>", "<unknown>"},
		},
		{
			name: "validating binding, paramRef with a namespace", resource: "validatingadmissionpolicybindings",
			obj:     bindingWithParamRef(&admissionregistrationv1.ParamRef{Name: "params", Namespace: "default"}),
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"}, cells: []any{"replicas-binding", "replicas", "default/params", "<unknown>"},
		},
		{
			name: "validating binding, paramRef without a namespace", resource: "validatingadmissionpolicybindings",
			obj:     bindingWithParamRef(&admissionregistrationv1.ParamRef{Name: "params"}),
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"}, cells: []any{"replicas-binding", "replicas", "*/params", "<unknown>"},
		},
		{
			name: "mutating binding, paramRef by selector", resource: "mutatingadmissionpolicybindings",
			obj: func() runtime.Object {
				b := validMutatingBinding()
				b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}
				return b
			}(),
			columns: []string{"Name", "PolicyName", "ParamRef", "Age"},
			cells:   []any{"labels-binding", "labels", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}", "<unknown>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := registrytest.REST(t, NewStorage, tt.resource).ConvertToTable(context.Background(), tt.obj, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff(tt.columns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.cells, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

func bindingWithParamRef(ref *admissionregistrationv1.ParamRef) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b := validBinding()
	b.Spec.ParamRef = ref
	return b
}

// TestValidateStatusMessages: upstream's messages for a bad status.
func TestValidateStatusMessages(t *testing.T) {
	errs := validateStatus(&admissionregistrationv1.ValidatingAdmissionPolicyStatus{TypeChecking: &admissionregistrationv1.TypeChecking{
		ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0", Warning: "w"}},
	}})
	want := field.ErrorList{field.Invalid(field.NewPath("status", "typeChecking", "expressionWarnings").Index(0).Child("fieldRef"), "spec.validations[0",
		"invalid JSONPath: unterminated array")}
	if diff := cmp.Diff(want.ToAggregate().Error(), errs.ToAggregate().Error()); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
