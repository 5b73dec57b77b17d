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
	"cmp"
	"context"
	"strings"

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

// Storage is the storage of events.
type Storage struct {
	Events *registry.REST
}

// Map is the storage by resource, as installed.
func (s *Storage) Map() map[string]rest.Storage {
	return map[string]rest.Storage{"events": s.Events}
}

// NewStorage returns New's storage by resource.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	return registry.StorageMap(New(optsGetter))
}

// New returns the storage of events.
func New(optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	s := registry.NewStrategy(true)
	s.GenericMetadata = true // validateCreate and validateUpdate check finalizers where upstream does
	s.CreateOnUpdate = true
	// Upstream's ValidateEventCreate: no metadata check of its own (for
	// core/v1 events rest.ValidateCreate's common one runs only once the
	// event passed).
	s.ValidateCreateRequest = func(ctx context.Context, obj runtime.Object) field.ErrorList {
		return validateCreate(ctx, obj.(*corev1.Event))
	}
	s.ValidateUpdateRequest = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
		return validateUpdate(ctx, obj.(*corev1.Event), old.(*corev1.Event))
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   corev1.Resource("events"),
		Singular:   "event",
		ShortNames: []string{"ev"},
		New:        func() runtime.Object { return &corev1.Event{} },
		NewList:    func() runtime.Object { return &corev1.EventList{} },
		Strategy:   s,
		Fields:     func(obj runtime.Object) fields.Set { return api.EventFields(obj.(*corev1.Event)) },
		Table:      registry.Table{Columns: columns, Cells: cells},
	})
	if err != nil {
		return nil, err
	}
	return &Storage{Events: store}, nil
}

// columns are upstream's (pkg/printers/internalversion): the server's
// Table is always the wide one.
var columns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string", Description: eventDoc["lastTimestamp"]},
	{Name: "Type", Type: "string", Description: eventDoc["type"]},
	{Name: "Reason", Type: "string", Description: eventDoc["reason"]},
	{Name: "Object", Type: "string", Description: eventDoc["involvedObject"]},
	{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
	{Name: "Source", Type: "string", Priority: 1, Description: eventDoc["source"]},
	{Name: "Message", Type: "string", Description: eventDoc["message"]},
	{Name: "First Seen", Type: "string", Priority: 1, Description: eventDoc["firstTimestamp"]},
	{Name: "Count", Type: "string", Priority: 1, Description: eventDoc["count"]},
	{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: registry.NameColumn.Description},
}

var eventDoc = corev1.Event{}.SwaggerDoc()

// cells are upstream's printEvent's, wide.
func cells(obj runtime.Object) []any {
	e := obj.(*corev1.Event)
	first := registry.Age(e.FirstTimestamp)
	if e.FirstTimestamp.IsZero() {
		first = registry.Age(metav1.Time(e.EventTime))
	}
	last := registry.Age(e.LastTimestamp)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last, count = registry.Age(metav1.Time(e.Series.LastObservedTime)), e.Series.Count
	} else if count == 0 {
		count = 1 // a singleton event of the events.k8s.io API
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	source := cmp.Or(e.Source.Component, e.ReportingController)
	if instance := cmp.Or(e.Source.Host, e.ReportingInstance); instance != "" {
		source += ", " + instance
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message), first, int64(count), e.Name}
}
