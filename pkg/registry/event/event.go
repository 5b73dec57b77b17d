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

package event

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of events.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	s := registry.NewStrategy(true)
	s.CreateOnUpdate = true
	s.ValidateFields = func(obj runtime.Object) field.ErrorList { return validate(obj.(*corev1.Event)) }
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("events"),
		Singular:   "event",
		ShortNames: []string{"ev"},
		New:        func() runtime.Object { return &corev1.Event{} },
		NewList:    func() runtime.Object { return &corev1.EventList{} },
		Strategy:   s,
		Fields:     func(obj runtime.Object) fields.Set { return api.EventFields(obj.(*corev1.Event)) },
		Table: registry.Table{
			Columns: []metav1.TableColumnDefinition{
				{Name: "Last Seen", Type: "string", Description: "Time of the last occurrence."},
				{Name: "Type", Type: "string", Description: "Type of this event."},
				{Name: "Reason", Type: "string", Description: "Why the action was taken."},
				{Name: "Object", Type: "string", Description: "The object this event is about."},
				{Name: "Message", Type: "string", Description: "A description of the event."},
				{Name: "Count", Type: "integer", Priority: 1, Description: "How often it occurred."},
				{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: "The event's name."},
			},
			Cells: func(obj runtime.Object) []any {
				e := obj.(*corev1.Event)
				last := e.LastTimestamp
				if last.IsZero() {
					last = metav1.NewTime(e.EventTime.Time)
				}
				if last.IsZero() {
					last = e.CreationTimestamp
				}
				target := e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name
				return []any{registry.Age(last), e.Type, e.Reason, target, e.Message, int64(e.Count), e.Name}
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{"events": store}, nil
}

func validate(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if ns := e.InvolvedObject.Namespace; ns != "" && ns != e.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("involvedObject", "namespace"), ns, "does not match event.namespace"))
	}
	if e.Type != "" && e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.NotSupported(field.NewPath("type"), e.Type, []string{corev1.EventTypeNormal, corev1.EventTypeWarning}))
	}
	return errs
}
