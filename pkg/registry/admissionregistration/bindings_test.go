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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func validBinding() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas-binding", ResourceVersion: "1"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "replicas",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
}

func validMutatingBinding() *admissionregistrationv1.MutatingAdmissionPolicyBinding {
	return &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "labels-binding", ResourceVersion: "1"},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "labels"},
	}
}

// bindingKinds are the two bindings, made of what both have, for the test bodies they share.
var bindingKinds = []struct {
	resource string
	build    func(policyName string, ref *admissionregistrationv1.ParamRef, match *admissionregistrationv1.MatchResources) runtime.Object
}{
	{"validatingadmissionpolicybindings", func(policyName string, ref *admissionregistrationv1.ParamRef, match *admissionregistrationv1.MatchResources) runtime.Object {
		b := validBinding()
		b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources = policyName, ref, match
		return b
	}},
	{"mutatingadmissionpolicybindings", func(policyName string, ref *admissionregistrationv1.ParamRef, match *admissionregistrationv1.MatchResources) runtime.Object {
		b := validMutatingBinding()
		b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources = policyName, ref, match
		return b
	}},
}

func TestValidateBindings(t *testing.T) {
	deny := ptr.To(admissionregistrationv1.DenyAction)
	tests := []struct {
		name       string
		policyName string
		ref        *admissionregistrationv1.ParamRef
		match      *admissionregistrationv1.MatchResources
		want       []string
	}{
		{name: "valid", policyName: "p", want: []string{}},
		{
			name: "valid: paramRef by name, matchResources", policyName: "p",
			ref:   &admissionregistrationv1.ParamRef{Name: "params", Namespace: "default", ParameterNotFoundAction: deny},
			match: validMatchResources(), want: []string{},
		},
		{
			name: "valid: paramRef by selector", policyName: "p",
			ref:  &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)},
			want: []string{},
		},
		{name: "no policyName", want: []string{"spec.policyName: Required value"}},
		{name: "policyName not a name", policyName: "Not_A_Name", want: []string{"spec.policyName: Invalid value"}},
		{
			name: "paramRef: name and selector, no parameterNotFoundAction", policyName: "p",
			ref: &admissionregistrationv1.ParamRef{Name: "params", Selector: &metav1.LabelSelector{}},
			want: []string{"spec.paramRef.name: Forbidden", "spec.paramRef.parameterNotFoundAction: Required value",
				"spec.paramRef.selector: Forbidden"},
		},
		{
			name: "paramRef: neither name nor selector, unknown action", policyName: "p",
			ref:  &admissionregistrationv1.ParamRef{ParameterNotFoundAction: ptr.To(admissionregistrationv1.ParameterNotFoundActionType("Ignore"))},
			want: []string{"spec.paramRef.parameterNotFoundAction: Unsupported value", "spec.paramRef: Required value"},
		},
		{
			name: "matchResources not defaulted", policyName: "p", match: &admissionregistrationv1.MatchResources{},
			want: []string{"spec.matchResources.matchPolicy: Required value", "spec.matchResources.namespaceSelector: Required value",
				"spec.matchResources.objectSelector: Required value"},
		},
	}
	for _, kind := range bindingKinds {
		store := registrytest.REST(t, NewStorage, kind.resource)
		for _, tt := range tests {
			t.Run(kind.resource+"/"+tt.name, func(t *testing.T) {
				obj := kind.build(tt.policyName, tt.ref, tt.match)
				got := registrytest.ErrorPaths(store.CreateStrategy.Validate(context.Background(), obj))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Validate errors (-want +got):\n%s", diff)
				}
				got = registrytest.ErrorPaths(store.UpdateStrategy.ValidateUpdate(context.Background(), obj, kind.build("p", nil, nil)))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ValidateUpdate errors (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestValidateValidationActions(t *testing.T) {
	tests := []struct {
		name    string
		actions []admissionregistrationv1.ValidationAction
		want    []string
		// wantDetail, if set, is the detail of the only error.
		wantDetail string
	}{
		{name: "Deny", actions: []admissionregistrationv1.ValidationAction{"Deny"}, want: []string{}},
		{name: "Warn and Audit", actions: []admissionregistrationv1.ValidationAction{"Warn", "Audit"}, want: []string{}},
		// As upstream, the declarative rule's error, which has no detail,
		// in place of the handwritten one.
		{name: "none", want: []string{"spec.validationActions: Required value"}},
		{
			name: "Deny and Warn", actions: []admissionregistrationv1.ValidationAction{"Deny", "Warn"}, want: []string{"spec.validationActions: Invalid value"},
			wantDetail: "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
		},
		{
			name: "unknown and duplicate", actions: []admissionregistrationv1.ValidationAction{"Audit", "Log", "Audit"},
			want: []string{"spec.validationActions[1]: Unsupported value", "spec.validationActions[2]: Duplicate value"},
		},
	}
	store := registrytest.REST(t, NewStorage, "validatingadmissionpolicybindings")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBinding()
			b.Spec.ValidationActions = tt.actions
			errs := store.CreateStrategy.Validate(context.Background(), b)
			if diff := cmp.Diff(tt.want, registrytest.ErrorPaths(errs)); diff != "" {
				t.Errorf("Validate errors (-want +got):\n%s", diff)
			}
			if tt.wantDetail != "" && (len(errs) != 1 || errs[0].Detail != tt.wantDetail) {
				t.Errorf("Validate: got %v, want one error with detail %q", errs, tt.wantDetail)
			}
		})
	}
}

func TestValidateMutatingBindingOperations(t *testing.T) {
	b := validMutatingBinding()
	b.Spec.MatchResources = validMatchResources()
	b.Spec.MatchResources.ResourceRules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
	errs := registrytest.REST(t, NewStorage, "mutatingadmissionpolicybindings").CreateStrategy.Validate(context.Background(), b)
	want := field.ErrorList{field.NotSupported(field.NewPath("spec", "matchResources", "resourceRules", "operations"),
		admissionregistrationv1.Delete, supportedMutatingOperations)}
	if diff := cmp.Diff(want.ToAggregate().Error(), errs.ToAggregate().Error()); diff != "" {
		t.Errorf("Validate errors (-want +got):\n%s", diff)
	}
}
