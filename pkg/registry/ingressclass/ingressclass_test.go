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

func TestStorage(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: networkingv1.Resource("ingressclasses"), Singular: "ingressclass"})
}

func TestValidate(t *testing.T) {
	params := func(ic *networkingv1.IngressClass) *networkingv1.IngressClassParametersReference {
		return ic.Spec.Parameters
	}
	tests := []registrytest.Mutation[*networkingv1.IngressClass]{
		{Name: "valid", Mutate: func(*networkingv1.IngressClass) {}, Want: []string{}},
		{Name: "no parameters", Mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = nil }, Want: []string{}},
		{Name: "no controller", Mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "" }, Want: []string{"spec.controller: Required value"}},
		{Name: "controller without a domain", Mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "nginx" }, Want: []string{"spec.controller: Invalid value"}},
		{
			Name:   "controller too long",
			Mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "example.com/" + strings.Repeat("a", 250) },
			Want:   []string{"spec.controller: Too long"},
		},
		{
			Name: "parameters without kind and name, bad group",
			Mutate: func(ic *networkingv1.IngressClass) {
				params(ic).Kind, params(ic).Name, params(ic).APIGroup = "", "", ptr.To("Bad_Group")
			},
			Want: []string{"spec.parameters.apiGroup: Invalid value", "spec.parameters.kind: Required value", "spec.parameters.name: Required value"},
		},
		{
			Name:   "kind with a slash",
			Mutate: func(ic *networkingv1.IngressClass) { params(ic).Kind = "a/b" },
			Want:   []string{"spec.parameters.kind: Invalid value"},
		},
		{Name: "no scope", Mutate: func(ic *networkingv1.IngressClass) { params(ic).Scope = nil }, Want: []string{"spec.parameters.scope: Required value"}},
		{Name: "unknown scope", Mutate: func(ic *networkingv1.IngressClass) { params(ic).Scope = ptr.To("Galaxy") }, Want: []string{"spec.parameters.scope: Unsupported value"}},
		{
			Name: "Namespace scope without a namespace",
			Mutate: func(ic *networkingv1.IngressClass) {
				params(ic).Scope = ptr.To(networkingv1.IngressClassParametersReferenceScopeNamespace)
			},
			Want: []string{"spec.parameters.namespace: Required value"},
		},
		{
			Name: "Namespace scope with a bad namespace",
			Mutate: func(ic *networkingv1.IngressClass) {
				params(ic).Scope, params(ic).Namespace = ptr.To(networkingv1.IngressClassParametersReferenceScopeNamespace), ptr.To("Not_A_Namespace")
			},
			Want: []string{"spec.parameters.namespace: Invalid value"},
		},
		{
			Name:   "Cluster scope with a namespace",
			Mutate: func(ic *networkingv1.IngressClass) { params(ic).Namespace = ptr.To("default") },
			Want:   []string{"spec.parameters.namespace: Forbidden"},
		},
	}
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			ic := registrytest.Modified(validClass(), tt.Mutate)
			got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), ic))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			old := registrytest.Modified(validClass(), func(old *networkingv1.IngressClass) { old.Spec.Controller = ic.Spec.Controller })
			got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), ic, old))
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdateControllerImmutable(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	ic := registrytest.Modified(validClass(), func(ic *networkingv1.IngressClass) { ic.Spec.Controller = "example.com/other" })
	if diff := cmp.Diff([]string{"spec.controller: Invalid value"}, registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), ic, validClass()))); diff != "" {
		t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
	}
	params := registrytest.Modified(validClass(), func(ic *networkingv1.IngressClass) { ic.Spec.Parameters.Name = "internal-lb" })
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
	tests := []registrytest.Generation[*networkingv1.IngressClass]{
		{Name: "annotations", Mutate: func(ic *networkingv1.IngressClass) { ic.Annotations = map[string]string{"a": "b"} }, Want: 1},
		{Name: "spec", Mutate: func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = nil }, Want: 2},
	}
	registrytest.CheckGenerations(t, store.UpdateStrategy, ic, tests, nil)
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	registrytest.CheckFields(t, store, validClass(), fields.Set{"metadata.name": "nginx"})
}

func TestTable(t *testing.T) {
	tests := []registrytest.Row{
		{Name: "parameters with a group", Obj: validClass(), Want: []any{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "<unknown>"}},
		{
			Name: "default class, core parameters",
			Obj: registrytest.Modified(validClass(), func(ic *networkingv1.IngressClass) {
				ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
				ic.Spec.Parameters.APIGroup = nil
			}),
			Want: []any{"nginx (default)", "k8s.io/ingress-nginx", "IngressParameters/external-lb", "<unknown>"},
		},
		{Name: "no parameters", Obj: registrytest.Modified(validClass(), func(ic *networkingv1.IngressClass) { ic.Spec.Parameters = nil }), Want: []any{"nginx", "k8s.io/ingress-nginx", "<none>", "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "ingressclasses")
	registrytest.CheckTable(t, store, []string{"Name", "Controller", "Parameters", "Age"}, tests...)
}
