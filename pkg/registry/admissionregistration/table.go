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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The tables of upstream's printers (pkg/printers/internalversion).

// unset is what a policy without paramKind, or a binding without paramRef, prints.
const unset = "<unset>"

var (
	paramKindColumn = metav1.TableColumnDefinition{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"}
)

func webhookConfigurationTable(parts func(runtime.Object) (metav1.ObjectMeta, int)) registry.Table {
	return registry.Table{
		Columns: []metav1.TableColumnDefinition{
			registry.NameColumn,
			{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
			registry.AgeColumn,
		},
		Cells: func(obj runtime.Object) []any {
			m, n := parts(obj)
			return []any{m.Name, int64(n), registry.Age(m.CreationTimestamp)}
		},
	}
}

var validatingPolicyTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		paramKindColumn,
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		p := obj.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		return []any{p.Name, int64(len(p.Spec.Validations)), paramKind(p.Spec.ParamKind), registry.Age(p.CreationTimestamp)}
	},
}

var mutatingPolicyTable = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Mutations", Type: "integer", Description: "Mutation indicates the number of mutations rules defined in this configuration"},
		paramKindColumn,
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		p := obj.(*admissionregistrationv1.MutatingAdmissionPolicy)
		return []any{p.Name, int64(len(p.Spec.Mutations)), paramKind(p.Spec.ParamKind), registry.Age(p.CreationTimestamp)}
	},
}

// paramKind prints "<apiVersion>/<kind>" (so "v1/ConfigMap" for the core group).
func paramKind(k *admissionregistrationv1.ParamKind) string {
	if k == nil {
		return unset
	}
	return k.APIVersion + "/" + k.Kind
}

func bindingTable(parts func(runtime.Object) (metav1.ObjectMeta, string, *admissionregistrationv1.ParamRef)) registry.Table {
	return registry.Table{
		Columns: []metav1.TableColumnDefinition{
			registry.NameColumn,
			{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
			{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
			registry.AgeColumn,
		},
		Cells: func(obj runtime.Object) []any {
			m, policyName, ref := parts(obj)
			return []any{m.Name, policyName, paramRef(ref), registry.Age(m.CreationTimestamp)}
		},
	}
}

// paramRef prints "<namespace>/<name>", "*/<name>" without a namespace (the
// params may be cluster-scoped or in the request's namespace), or the selector.
func paramRef(ref *admissionregistrationv1.ParamRef) string {
	switch {
	case ref == nil:
		return unset
	case ref.Name != "" && ref.Namespace != "":
		return ref.Namespace + "/" + ref.Name
	case ref.Name != "":
		return "*/" + ref.Name
	case ref.Selector != nil:
		return ref.Selector.String()
	}
	return unset
}
