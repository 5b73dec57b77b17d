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

package resourcequota

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

var q = resource.MustParse

func validQuota() *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"pods": q("10"), "requests.cpu": q("2"), "limits.memory": q("4Gi"), "count/deployments.apps": q("3"), "requests.nvidia.com/gpu": q("1"),
		}},
	}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "resourcequotas", "resourcequotas", "resourcequotas/status")
	status := storages["resourcequotas/status"].(*registry.StatusREST)
	store := registrytest.REST(t, NewStorage, "resourcequotas")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: corev1.Resource("resourcequotas"), Singular: "resourcequota", Namespaced: true, ShortNames: []string{"quota"}})
	registrytest.CheckSpecAndStatus(t, store, status, "v1")
}

func TestValidate(t *testing.T) {
	hard := func(list corev1.ResourceList) func(*corev1.ResourceQuota) {
		return func(rq *corev1.ResourceQuota) { rq.Spec.Hard = list }
	}
	tests := []registrytest.Mutation[*corev1.ResourceQuota]{
		{Name: "valid", Mutate: func(*corev1.ResourceQuota) {}, Want: []string{}},
		{Name: "negative", Mutate: hard(corev1.ResourceList{"cpu": q("-1")}), Want: []string{"spec.hard[cpu]: Invalid value"}},
		{Name: "fractional count", Mutate: hard(corev1.ResourceList{"pods": q("1500m")}), Want: []string{"spec.hard[pods]: Invalid value"}},
		{Name: "fractional extended resource", Mutate: hard(corev1.ResourceList{"example.com/foo": q("0.5")}), Want: []string{"spec.hard[example.com/foo]: Invalid value"}},
		{Name: "unknown unqualified resource", Mutate: hard(corev1.ResourceList{"widgets": q("1")}), Want: []string{"spec.hard[widgets]: Invalid value", "spec.hard[widgets]: Invalid value"}},
		{Name: "storage is not a quota resource", Mutate: hard(corev1.ResourceList{"storage": q("1Gi")}), Want: []string{"spec.hard[storage]: Invalid value"}},
		{Name: "not a qualified name", Mutate: hard(corev1.ResourceList{"a b": q("1")}), Want: []string{"spec.hard[a b]: Invalid value", "spec.hard[a b]: Invalid value"}},
		{Name: "huge pages", Mutate: hard(corev1.ResourceList{"requests.hugepages-2Mi": q("1Gi")}), Want: []string{}},
		{
			Name: "scopes",
			Mutate: func(rq *corev1.ResourceQuota) {
				rq.Spec = corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": q("1")}, Scopes: []corev1.ResourceQuotaScope{"BestEffort"}}
			},
			Want: []string{},
		},
		{
			Name: "unsupported, misapplied and conflicting scopes",
			Mutate: func(rq *corev1.ResourceQuota) {
				rq.Spec = corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": q("1")}, Scopes: []corev1.ResourceQuotaScope{"Sometimes", "BestEffort", "NotBestEffort"}}
			},
			Want: []string{"spec.scopes: Invalid value", "spec.scopes: Invalid value", "spec.scopes: Invalid value"},
		},
		{
			Name: "scope selector",
			Mutate: func(rq *corev1.ResourceQuota) {
				rq.Spec = corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": q("1")}, ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
					{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}},
				}}}
			},
			Want: []string{},
		},
		{
			Name: "bad scope selector",
			Mutate: func(rq *corev1.ResourceQuota) {
				rq.Spec = corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": q("1")}, ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
					{ScopeName: "Sometimes", Operator: corev1.ScopeSelectorOpExists},
					{ScopeName: corev1.ResourceQuotaScopeTerminating, Operator: corev1.ScopeSelectorOpIn},
					{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: "Near", Values: []string{"x"}},
				}}}
			},
			Want: []string{
				"spec.scopeSelector.matchExpressions.operator: Invalid value", "spec.scopeSelector.matchExpressions.operator: Invalid value",
				"spec.scopeSelector.matchExpressions.scopeName: Invalid value", "spec.scopeSelector.matchExpressions.values: Required value",
			},
		},
	}
	store := registrytest.REST(t, NewStorage, "resourcequotas")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			rq := registrytest.Modified(validQuota(), tt.Mutate)
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), rq))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			old := registrytest.Modified(validQuota(), func(old *corev1.ResourceQuota) { old.Spec.Scopes = rq.Spec.Scopes })
			got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), rq, old))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name string
		list corev1.ResourceList
		want []string
	}{
		{name: "negative", list: corev1.ResourceList{"memory": q("-1Gi")}, want: []string{"must be greater than or equal to 0"}},
		{name: "fraction", list: corev1.ResourceList{"services": q("0.5")}, want: []string{"must be an integer"}},
		{name: "storage", list: corev1.ResourceList{"storage": q("1")}, want: []string{"must be a standard resource for quota"}},
		{name: "unknown", list: corev1.ResourceList{"gpus": q("1")}, want: []string{"must be a standard resource type or fully qualified", "must be a standard resource for quota"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range validateSpec(&corev1.ResourceQuotaSpec{Hard: tt.list}) {
				got = append(got, e.Detail)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdateScopesImmutable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "resourcequotas")
	old := registrytest.Modified(validQuota(), func(rq *corev1.ResourceQuota) {
		rq.Spec.Hard = corev1.ResourceList{"pods": q("1")}
		rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	})
	tests := []struct {
		name   string
		scopes []corev1.ResourceQuotaScope
		want   []string
	}{
		{name: "same", scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}, want: []string{}},
		{name: "changed", scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}, want: []string{"spec.scopes: Invalid value"}},
		{name: "removed", scopes: nil, want: []string{"spec.scopes: Invalid value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rq := registrytest.Modified(old, func(rq *corev1.ResourceQuota) { rq.Spec.Scopes = tt.scopes })
			if diff := cmp.Diff(tt.want, registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), rq, old))); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateContainerResourceName(t *testing.T) {
	tests := []struct {
		name corev1.ResourceName
		want int
	}{
		{name: "cpu"}, {name: "memory"}, {name: "ephemeral-storage"}, {name: "hugepages-2Mi"}, {name: "nvidia.com/gpu"},
		{name: "kubernetes.io/foo"},
		{name: "pods", want: 1},
		{name: "requests.example.com/foo", want: 1},
		{name: "widgets", want: 2},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			if got := ValidateContainerResourceName(tt.name, field.NewPath("r")); len(got) != tt.want {
				t.Errorf("errors: got %v, want %d", got, tt.want)
			}
		})
	}
}

func TestPrepareForCreateAndUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "resourcequotas")
	withStatus := registrytest.Modified(validQuota(), func(rq *corev1.ResourceQuota) {
		rq.Status = corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{"pods": q("10")}, Used: corev1.ResourceList{"pods": q("1")}}
	})
	created := withStatus.DeepCopy()
	store.CreateStrategy.PrepareForCreate(context.Background(), created)
	if diff := cmp.Diff(corev1.ResourceQuotaStatus{}, created.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if created.Generation != 0 {
		t.Errorf("generation after PrepareForCreate: got %d, want 0 (upstream does not count it)", created.Generation)
	}
	updated := registrytest.Modified(withStatus, func(rq *corev1.ResourceQuota) {
		rq.Status = corev1.ResourceQuotaStatus{}
		rq.Spec.Hard["pods"] = q("20")
	})
	store.UpdateStrategy.PrepareForUpdate(context.Background(), updated, withStatus)
	if diff := cmp.Diff(withStatus.Status, updated.Status); diff != "" {
		t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// resourcequotas and of resourcequotas/status.
func TestUpdateThroughStores(t *testing.T) {
	newStatus := corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{"pods": q("20")}, Used: corev1.ResourceList{"pods": q("2")}}
	tests := []struct {
		name        string
		status      bool
		noRV        bool
		newStatus   corev1.ResourceQuotaStatus
		wantPods    string
		wantStatus  corev1.ResourceQuotaStatus
		wantInvalid []string
	}{
		{name: "main: spec changes, status kept", newStatus: newStatus, wantPods: "20"},
		{name: "status: status changes, spec kept", status: true, newStatus: newStatus, wantPods: "10", wantStatus: newStatus},
		{
			name: "status: negative used", status: true,
			newStatus:   corev1.ResourceQuotaStatus{Used: corev1.ResourceList{"pods": q("-1")}},
			wantInvalid: []string{"status.used[pods]: FieldValueInvalid"},
		},
		{name: "status: without a resourceVersion (unconditional)", status: true, noRV: true, newStatus: newStatus, wantPods: "10", wantStatus: newStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "resourcequotas", tt.status, validQuota(), func(rq *corev1.ResourceQuota) {
				rq.Spec.Hard["pods"] = q("20")
				rq.Status = tt.newStatus
				if tt.noRV {
					rq.ResourceVersion = ""
				}
			})
			if registrytest.CheckInvalid(t, err, tt.wantInvalid) {
				return
			}
			if pods := got.Spec.Hard["pods"]; pods.String() != tt.wantPods {
				t.Errorf("spec.hard.pods: got %s, want %s", pods.String(), tt.wantPods)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "resourcequotas")
	registrytest.CheckFields(t, store, validQuota(), fields.Set{"metadata.name": "compute", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	tests := []struct {
		name   string
		status corev1.ResourceQuotaStatus
		want   []any
	}{
		{name: "no status yet", want: []any{"compute", "", "", "<unknown>"}},
		{
			name: "requests and limits, sorted",
			status: corev1.ResourceQuotaStatus{
				Hard: corev1.ResourceList{"pods": q("10"), "requests.cpu": q("2"), "limits.memory": q("4Gi"), "limits.cpu": q("4")},
				Used: corev1.ResourceList{"pods": q("1"), "requests.cpu": q("500m")},
			},
			want: []any{"compute", "pods: 1/10, requests.cpu: 500m/2", "limits.cpu: 0/4, limits.memory: 0/4Gi", "<unknown>"},
		},
	}
	store := registrytest.REST(t, NewStorage, "resourcequotas")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), registrytest.Modified(validQuota(), func(rq *corev1.ResourceQuota) { rq.Status = tt.status }), nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Request", "Limit", "Age"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
