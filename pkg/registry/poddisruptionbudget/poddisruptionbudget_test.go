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

package poddisruptionbudget

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validPDB() *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "poddisruptionbudgets", "poddisruptionbudgets", "poddisruptionbudgets/status")
	status, ok := storages["poddisruptionbudgets/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("storage %q: got %T, want *registry.StatusREST", "poddisruptionbudgets/status", storages["poddisruptionbudgets/status"])
	}
	store := registrytest.REST(t, NewStorage, "poddisruptionbudgets")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: policyv1.Resource("poddisruptionbudgets"), Singular: "poddisruptionbudget", Namespaced: true, ShortNames: []string{"pdb"}})
	registrytest.CheckSpecAndStatus(t, store, status, "policy/v1")
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*policyv1.PodDisruptionBudget]{
		{Name: "valid", Obj: validPDB(), Want: []string{}},
		{
			Name: "maxUnavailable as a percentage, no selector",
			Obj: registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MinAvailable, p.Spec.MaxUnavailable, p.Spec.Selector = nil, ptr.To(intstr.FromString("100%")), nil
			}),
			Want: []string{},
		},
		{
			Name: "both set",
			Obj:  registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1)) }),
			Want: []string{"spec: Invalid value"},
		},
		{
			Name: "negative minAvailable",
			Obj:  registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromInt32(-1)) }),
			Want: []string{"spec.minAvailable: Invalid value"},
		},
		{
			Name: "not a percentage",
			Obj:  registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromString("half")) }),
			Want: []string{"spec.minAvailable: Invalid value"},
		},
		{
			Name: "more than 100%",
			Obj: registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, ptr.To(intstr.FromString("101%"))
			}),
			Want: []string{"spec.maxUnavailable: Invalid value"},
		},
		{
			Name: "invalid selector",
			Obj: registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "not valid!"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}
			}),
			Want: []string{"spec.selector.matchExpressions[0].operator: Invalid value", "spec.selector.matchLabels: Invalid value"},
		},
		{
			Name: "unknown unhealthyPodEvictionPolicy",
			Obj: registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.UnhealthyPodEvictionPolicyType("Sometimes"))
			}),
			Want: []string{"spec.unhealthyPodEvictionPolicy: Unsupported value"},
		},
		{
			Name: "AlwaysAllow",
			Obj: registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
			}),
			Want: []string{},
		},
	}
	store := registrytest.REST(t, NewStorage, "poddisruptionbudgets")
	registrytest.ValidateCreateAndUpdate(t, store, registrytest.ErrorPaths, validPDB, tests)
}

func TestValidateMessages(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "poddisruptionbudgets")
	both := registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr.To(intstr.FromString("150%")) })
	errs := store.CreateStrategy.Validate(context.Background(), both)
	var got []string
	for _, e := range errs {
		got = append(got, e.Detail)
	}
	want := []string{"minAvailable and maxUnavailable cannot be both set", "must not be greater than 100%"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error details (-want +got):\n%s", diff)
	}
}

// TestValidateUpdateKeepsInvalidLabelValue: as upstream, a budget stored
// with an invalid label value in its selector may be updated with it.
func TestValidateUpdateKeepsInvalidLabelValue(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "poddisruptionbudgets")
	invalid := registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
		p.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"not valid!"}}}
	})
	if got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), invalid)); len(got) != 1 {
		t.Errorf("create with an invalid label value: got %v, want one error", got)
	}
	if got := registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), invalid, invalid)); len(got) != 0 {
		t.Errorf("update of a stored invalid label value: got %v, want none", got)
	}
}

func TestPrepareForCreate(t *testing.T) {
	pdb := registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
		p.Generation = 7
		p.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 3, ExpectedPods: 4}
	})
	registrytest.REST(t, NewStorage, "poddisruptionbudgets").CreateStrategy.PrepareForCreate(context.Background(), pdb)
	if diff := cmp.Diff(policyv1.PodDisruptionBudgetStatus{}, pdb.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if pdb.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", pdb.Generation)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	old := registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
		p.Generation = 2
		p.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}
	})
	tests := []registrytest.Generation[*policyv1.PodDisruptionBudget]{
		{Name: "labels", Mutate: func(p *policyv1.PodDisruptionBudget) { p.Labels = map[string]string{"a": "b"} }, Want: 2},
		{Name: "status", Mutate: func(p *policyv1.PodDisruptionBudget) { p.Status.DisruptionsAllowed = 9 }, Want: 2},
		{Name: "spec", Mutate: func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromInt32(2)) }, Want: 3},
	}
	strategy := registrytest.REST(t, NewStorage, "poddisruptionbudgets").UpdateStrategy
	registrytest.CheckGenerations(t, strategy, old, tests, func(t *testing.T, obj *policyv1.PodDisruptionBudget) {
		if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
			t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
		}
	})
}

// TestUpdateThroughStores runs updates through the generic stores of
// poddisruptionbudgets and of poddisruptionbudgets/status.
func TestUpdateThroughStores(t *testing.T) {
	newStatus := policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2, CurrentHealthy: 3, DesiredHealthy: 1, ExpectedPods: 3}
	tests := []struct {
		name        string
		status      bool
		newStatus   policyv1.PodDisruptionBudgetStatus
		wantMin     intstr.IntOrString
		wantStatus  policyv1.PodDisruptionBudgetStatus
		wantInvalid []string
	}{
		{name: "main: spec changes, status kept", newStatus: newStatus, wantMin: intstr.FromInt32(2)},
		{name: "status: status changes, spec kept", status: true, newStatus: newStatus, wantMin: intstr.FromInt32(1), wantStatus: newStatus},
		{
			name: "status: negative counts are invalid", status: true,
			newStatus:   policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1, ExpectedPods: -2},
			wantInvalid: []string{"status.disruptionsAllowed: FieldValueInvalid", "status.expectedPods: FieldValueInvalid"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "poddisruptionbudgets", tt.status, registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) { p.Generation = 1 }), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MinAvailable = ptr.To(intstr.FromInt32(2))
				p.Status = tt.newStatus
			})
			if registrytest.CheckInvalid(t, err, tt.wantInvalid) {
				return
			}
			if *got.Spec.MinAvailable != tt.wantMin {
				t.Errorf("minAvailable: got %v, want %v", got.Spec.MinAvailable, tt.wantMin)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "poddisruptionbudgets")
	registrytest.CheckFields(t, store, validPDB(), fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "minAvailable", Obj: validPDB(), Want: []any{"web", "1", "N/A", int64(0), "<unknown>"}},
		{
			Name: "maxUnavailable, disruptions allowed",
			Obj: registrytest.Modified(validPDB(), func(p *policyv1.PodDisruptionBudget) {
				p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, ptr.To(intstr.FromString("25%"))
				p.Status.DisruptionsAllowed = 2
			}),
			Want: []any{"web", "N/A", "25%", int64(2), "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "poddisruptionbudgets")
	registrytest.CheckTable(t, store, []string{"Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"}, tests...)
}
