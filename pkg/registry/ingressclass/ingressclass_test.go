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

package ingressclass

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validClass() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", UID: "uid-1", ResourceVersion: "1"},
		Spec: networkingv1.IngressClassSpec{
			Controller: "k8s.io/ingress-nginx",
			Parameters: &networkingv1.IngressClassParametersReference{
				APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb",
				Scope: ptr.To(networkingv1.IngressClassParametersReferenceScopeCluster),
			},
		},
	}
}

func modified(ic *networkingv1.IngressClass, mutate func(*networkingv1.IngressClass)) *networkingv1.IngressClass {
	ic = ic.DeepCopy()
	mutate(ic)
	return ic
}

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: networkingv1.Resource("ingressclasses"), Singular: "ingressclass"})
}

func TestValidate(t *testing.T) {
	params := func(ic *networkingv1.IngressClass) *networkingv1.IngressClassParametersReference {
		return ic.Spec.Parameters
	}
	tests := []struct {
		name   string
		mutate func(*networkingv1.IngressClass)
		want   []string
	}{
		{name: "valid", mutate: func(*networkingv1.IngressClass) {}, want: []string{}},
		{name: "no parameters", mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = nil }, want: []string{}},
		{name: "no controller", mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "" }, want: []string{"spec.controller: Required value"}},
		{name: "controller without a domain", mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "nginx" }, want: []string{"spec.controller: Invalid value"}},
		{
			name:   "controller too long",
			mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "example.com/" + strings.Repeat("a", 250) },
			want:   []string{"spec.controller: Too long"},
		},
		{
			name: "parameters without kind and name, bad group",
			mutate: func(ic *networkingv1.IngressClass) {
				params(ic).Kind, params(ic).Name, params(ic).APIGroup = "", "", ptr.To("Bad_Group")
			},
			want: []string{"spec.parameters.apiGroup: Invalid value", "spec.parameters.kind: Required value", "spec.parameters.name: Required value"},
		},
		{
			name:   "kind with a slash",
			mutate: func(ic *networkingv1.IngressClass) { params(ic).Kind = "a/b" },
			want:   []string{"spec.parameters.kind: Invalid value"},
		},
		{name: "no scope", mutate: func(ic *networkingv1.IngressClass) { params(ic).Scope = nil }, want: []string{"spec.parameters.scope: Required value"}},
		{name: "unknown scope", mutate: func(ic *networkingv1.IngressClass) { params(ic).Scope = ptr.To("Galaxy") }, want: []string{"spec.parameters.scope: Unsupported value"}},
		{
			name: "Namespace scope without a namespace",
			mutate: func(ic *networkingv1.IngressClass) {
				params(ic).Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeNamespace)
			},
			want: []string{"spec.parameters.namespace: Required value"},
		},
		{
			name: "Namespace scope with a bad namespace",
			mutate: func(ic *networkingv1.IngressClass) {
				params(ic).Scope, params(ic).Namespace = ptr.To(networkingv1.IngressClassParametersReferenceScopeNamespace), ptr.To("Not_A_Namespace")
			},
			want: []string{"spec.parameters.namespace: Invalid value"},
		},
		{
			name:   "Cluster scope with a namespace",
			mutate: func(ic *networkingv1.IngressClass) { params(ic).Namespace = ptr.To("default") },
			want:   []string{"spec.parameters.namespace: Forbidden"},
		},
	}
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ic := modified(validClass(), tt.mutate)
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), ic))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			old := modified(validClass(), func(old *networkingv1.IngressClass) { old.Spec.Controller = ic.Spec.Controller })
			got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), ic, old))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdateControllerImmutable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	ic := modified(validClass(), func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "example.com/other" })
	if diff := cmp.Diff([]string{"spec.controller: Invalid value"}, registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), ic, validClass()))); diff != "" {
		t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
	}
	params := modified(validClass(), func(ic *networkingv1.IngressClass) { ic.Spec.Parameters.Name = "internal-lb" })
	if got := store.UpdateStrategy.ValidateUpdate(context.Background(), params, validClass()); len(got) != 0 {
		t.Errorf("changing parameters: got %v, want no errors", got)
	}
}

func TestPrepareForCreateAndUpdate(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	ic := validClass()
	store.CreateStrategy.PrepareForCreate(context.Background(), ic)
	if ic.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", ic.Generation)
	}
	tests := []struct {
		name           string
		mutate         func(*networkingv1.IngressClass)
		wantGeneration int64
	}{
		{name: "annotations", mutate: func(ic *networkingv1.IngressClass) { ic.Annotations = map[string]string{"a": "b"} }, wantGeneration: 1},
		{name: "spec", mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = nil }, wantGeneration: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := modified(ic, tt.mutate)
			store.UpdateStrategy.PrepareForUpdate(context.Background(), obj, ic)
			if obj.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", obj.Generation, tt.wantGeneration)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	registrytest.CheckFields(t, store, validClass(), fields.Set{"metadata.name": "nginx"})
}

func TestTable(t *testing.T) {
	tests := []struct {
		name string
		ic   *networkingv1.IngressClass
		want []any
	}{
		{name: "parameters with a group", ic: validClass(), want: []any{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "<unknown>"}},
		{
			name: "default class, core parameters",
			ic: modified(validClass(), func(ic *networkingv1.IngressClass) {
				ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
				ic.Spec.Parameters.APIGroup = nil
			}),
			want: []any{"nginx (default)", "k8s.io/ingress-nginx", "IngressParameters/external-lb", "<unknown>"},
		},
		{name: "no parameters", ic: modified(validClass(), func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = nil }), want: []any{"nginx", "k8s.io/ingress-nginx", "<none>", "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := store.ConvertToTable(context.Background(), tt.ic, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			if diff := cmp.Diff([]string{"Name", "Controller", "Parameters", "Age"}, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
