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
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

const groupVersion = "flowcontrol.apiserver.k8s.io/v1"

// NewStorage returns the storage of flowschemas, prioritylevelconfigurations
// and their status subresources. As upstream's strategies (no short names,
// no categories): a create clears status and starts the generation at 1;
// an update keeps status and counts a change of spec; a status update
// keeps spec and all the metadata but the managed fields.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	schemas, schemaStatus, err := newStore(optsGetter, registry.Resource{
		Resource: flowcontrolv1.Resource("flowschemas"),
		Singular: "flowschema",
		New:      func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
		NewList:  func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
		Table:    flowSchemaTable,
	}, func(obj, _ runtime.Object) field.ErrorList {
		return validateFlowSchema(obj.(*flowcontrolv1.FlowSchema))
	}, func(obj runtime.Object) field.ErrorList {
		return validateFlowSchemaStatus(&obj.(*flowcontrolv1.FlowSchema).Status)
	})
	if err != nil {
		return nil, err
	}
	// As upstream's printer, a list's rows are in the order the schemas match.
	schemas.TableConvertor = sortedFlowSchemaTable{flowSchemaTable}
	levels, levelStatus, err := newStore(optsGetter, registry.Resource{
		Resource: flowcontrolv1.Resource("prioritylevelconfigurations"),
		Singular: "prioritylevelconfiguration",
		New:      func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
		NewList:  func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
		Table:    priorityLevelTable,
	}, func(obj, old runtime.Object) field.ErrorList {
		var oldLevel *flowcontrolv1.PriorityLevelConfiguration
		if old != nil {
			oldLevel = old.(*flowcontrolv1.PriorityLevelConfiguration)
		}
		return validatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration), oldLevel)
	}, func(obj runtime.Object) field.ErrorList {
		return validatePriorityLevelStatus(&obj.(*flowcontrolv1.PriorityLevelConfiguration).Status)
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"flowschemas":                        schemas,
		"flowschemas/status":                 registry.NewStatusREST(schemas, schemaStatus),
		"prioritylevelconfigurations":        levels,
		"prioritylevelconfigurations/status": registry.NewStatusREST(levels, levelStatus),
	}, nil
}

// newStore returns the store of r, validated on create and update with
// validate (old nil on create), and the strategy of its status, whose
// updates are validated with validateStatus only.
func newStore(optsGetter generic.RESTOptionsGetter, r registry.Resource,
	validate func(obj, old runtime.Object) field.ErrorList, validateStatus func(obj runtime.Object) field.ErrorList,
) (*registry.REST, registry.Strategy, error) {
	base := registry.NewStrategy(false)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj, nil) }
	base.ValidateFieldsUpdate = validate
	main, status := registry.SpecAndStatus{GroupVersion: groupVersion, Generation: true}.Strategies(base)
	keepSpec := status.OnUpdate
	status.OnUpdate = func(obj, old runtime.Object) {
		keepSpec(obj, old)
		keepMetadata(obj, old)
	}
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList { return validateStatus(obj) }
	status.ResetFields = registry.Fieldpaths(groupVersion, "metadata", "spec")
	r.Strategy = main
	store, err := registry.NewREST(optsGetter, r)
	return store, status, err
}

// keepMetadata gives obj the metadata of old but for its managed fields,
// as upstream's status strategies do.
func keepMetadata(obj, old runtime.Object) {
	m := obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	managedFields := m.ManagedFields
	old.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta).DeepCopyInto(m)
	m.ManagedFields = managedFields
}

// The mandatory objects, by name, whose spec is fixed: upstream's
// internalbootstrap renditions of k8s.io/apiserver's, defaulted (upstream
// holds them to be left as they are by the defaults).
var (
	mandatoryFlowSchemas    = byName(bootstrap.MandatoryFlowSchemas)
	mandatoryPriorityLevels = byName(bootstrap.MandatoryPriorityLevelConfigurations)
)

func byName[T interface {
	runtime.Object
	GetName() string
}](objs []T) map[string]T {
	out := make(map[string]T, len(objs))
	for _, obj := range objs {
		defaulted := obj.DeepCopyObject().(T)
		api.Scheme.Default(defaulted)
		out[obj.GetName()] = defaulted
	}
	return out
}
