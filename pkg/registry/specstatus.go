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

package registry

import (
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SpecAndStatus describes a type with spec and status fields whose status
// is written through a status subresource (Deployment, Service, Job, ...).
type SpecAndStatus struct {
	// GroupVersion is the served group/version, for the reset fields.
	GroupVersion string
	// Generation starts metadata.generation at 1 and counts changes of
	// spec, as upstream does for the types controllers observe.
	Generation bool
	// StatusKeepsLabels makes status updates keep metadata.labels too (apps types).
	StatusKeepsLabels bool
	// StatusKeepsMetadata makes status updates keep what
	// metav1.ResetObjectMetaForStatus keeps (labels, annotations,
	// finalizers, owner references, generation, deletion timestamp), as
	// upstream's newer types do.
	StatusKeepsMetadata bool
	// Drop, if set, runs first on a create (old nil) and an update, before
	// a spec change is counted: it drops what disabled features may not
	// set, as upstream's PrepareForCreate and PrepareForUpdate do first.
	Drop func(obj, old runtime.Object)
}

// Strategies returns the strategies of the resource and of its status
// subresource, built on base:
//   - a create runs Drop, clears status, then runs base's OnCreate; an
//     update runs Drop, keeps the old status, counts a spec change, then
//     runs base's OnUpdate;
//   - a status update keeps the old spec (and labels, if asked), checks
//     only metadata and warns of nothing: set the status strategy's
//     ValidateFields* and Warnings to do more.
func (t SpecAndStatus) Strategies(base Strategy) (main, status Strategy) {
	main, status = base, base
	main.OnCreate = func(obj runtime.Object) {
		if t.Drop != nil {
			t.Drop(obj, nil)
		}
		fieldOf(obj, "Status").SetZero()
		if t.Generation {
			if m, err := meta.Accessor(obj); err == nil {
				m.SetGeneration(1)
			}
		}
		if base.OnCreate != nil {
			base.OnCreate(obj)
		}
	}
	main.OnUpdate = func(obj, old runtime.Object) {
		if t.Drop != nil {
			t.Drop(obj, old)
		}
		fieldOf(obj, "Status").Set(fieldOf(old, "Status"))
		if t.Generation && !apiequality.Semantic.DeepEqual(fieldOf(obj, "Spec").Interface(), fieldOf(old, "Spec").Interface()) {
			m, err1 := meta.Accessor(obj)
			oldMeta, err2 := meta.Accessor(old)
			if err1 == nil && err2 == nil {
				m.SetGeneration(oldMeta.GetGeneration() + 1)
			}
		}
		if base.OnUpdate != nil {
			base.OnUpdate(obj, old)
		}
	}
	main.ResetFields = Fieldpaths(t.GroupVersion, "status")

	status.OnCreate, status.CreateOnUpdate = nil, false // subresources never create
	status.ValidateFields, status.ValidateFieldsUpdate, status.Warnings = nil, nil, nil
	status.OnUpdate = func(obj, old runtime.Object) {
		fieldOf(obj, "Spec").Set(fieldOf(old, "Spec"))
		newMeta, err1 := meta.Accessor(obj)
		oldMeta, err2 := meta.Accessor(old)
		switch {
		case err1 != nil || err2 != nil:
		case t.StatusKeepsMetadata:
			metav1.ResetObjectMetaForStatus(newMeta, oldMeta)
		case t.StatusKeepsLabels:
			newMeta.SetLabels(oldMeta.GetLabels())
		}
	}
	resetPaths := []string{"spec"}
	switch {
	case t.StatusKeepsMetadata:
		resetPaths = append(resetPaths, "metadata")
	case t.StatusKeepsLabels:
		resetPaths = append(resetPaths, "metadata.labels")
	}
	status.ResetFields = Fieldpaths(t.GroupVersion, resetPaths...)
	return main, status
}

// fieldOf returns the settable field name of the struct obj points to; it
// panics if there is none, which the strategy tests of every type rule out.
func fieldOf(obj runtime.Object, name string) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName(name)
}
