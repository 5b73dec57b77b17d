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

package controllerrevision

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of controllerrevisions.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*appsv1.ControllerRevision)) }
	s.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		cr, oldCR := obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision)
		errs := validateRevision(cr.Revision)
		if !sameData(cr.Data, oldCR.Data) {
			errs = append(errs, field.Invalid(field.NewPath("data"), cr.Data, apimachineryvalidation.FieldImmutableErrorMsg))
		}
		return errs
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource: appsv1.Resource("controllerrevisions"),
		Singular: "controllerrevision",
		New:      func() runtime.Object { return &appsv1.ControllerRevision{} },
		NewList:  func() runtime.Object { return &appsv1.ControllerRevisionList{} },
		Strategy: s,
		Table:    table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"controllerrevisions": store}, nil
}

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		cr := obj.(*appsv1.ControllerRevision)
		return []any{cr.Name, controllerName(cr), cr.Revision, registry.Age(cr.CreationTimestamp)}
	},
}

// controllerName prints the controller owner as upstream does:
// "kind.group/name" in lower case ("daemonset.apps/agent"), else "<none>".
func controllerName(cr *appsv1.ControllerRevision) string {
	ref := metav1.GetControllerOf(cr)
	if ref == nil {
		return "<none>"
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || ref.Kind == "" {
		return ref.Name
	}
	return strings.ToLower(gv.WithKind(ref.Kind).GroupKind().String()) + "/" + ref.Name
}

func validateRevision(revision int64) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(revision, field.NewPath("revision"))
}

// validate is upstream's ValidateControllerRevisionCreate: a revision not
// negative and data that is a JSON object.
func validate(cr *appsv1.ControllerRevision) field.ErrorList {
	errs := validateRevision(cr.Revision)
	p := field.NewPath("data")
	var v any
	if cr.Data.Raw == nil {
		errs = append(errs, field.Required(p, "data is mandatory"))
	} else if err := json.Unmarshal(cr.Data.Raw, &v); err != nil {
		errs = append(errs, field.Invalid(p, "<value omitted>", fmt.Sprintf("error parsing data: %v", err.Error())))
	} else if v == nil {
		errs = append(errs, field.Required(p, "data is mandatory"))
	} else if _, ok := v.(map[string]any); !ok {
		errs = append(errs, field.Required(p, "data must be a valid JSON object"))
	}
	return errs
}

// sameData compares data as JSON values, so that an update that re-encodes
// the same object (other spacing or key order) does not change it.
func sameData(a, b runtime.RawExtension) bool {
	if bytes.Equal(a.Raw, b.Raw) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a.Raw, &va) != nil || json.Unmarshal(b.Raw, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
