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
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// eventsAPI is the context of a request through events.k8s.io/v1.
func eventsAPI() context.Context {
	return genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{APIGroup: "events.k8s.io", APIVersion: "v1"})
}

// newSeriesEvent is an event as the events.k8s.io API writes one.
func newSeriesEvent(mutate func(*corev1.Event)) *corev1.Event {
	return newEvent(func(e *corev1.Event) {
		e.EventTime = metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		e.Source, e.Count, e.FirstTimestamp, e.LastTimestamp = corev1.EventSource{}, 0, metav1.Time{}, metav1.Time{}
		e.ReportingController, e.ReportingInstance, e.Action = "example.com/controller", "controller-1", "Starting"
		if mutate != nil {
			mutate(e)
		}
	})
}

// TestValidateEventsAPI: events written through events.k8s.io are checked
// as upstream's ValidateEventCreate and ValidateEventUpdate do for it.
func TestValidateEventsAPI(t *testing.T) {
	tests := []registrytest.Change[*corev1.Event]{
		{Name: "valid", Obj: newSeriesEvent(nil), Want: []string{}},
		{
			Name: "legacy fields, a bad name and series",
			Obj: newSeriesEvent(func(e *corev1.Event) {
				e.Name, e.Type, e.Count, e.Source.Host = "Web!", "Error", 1, "node-1"
				e.ReportingController, e.Series = "", &corev1.EventSeries{Count: 1}
			}),
			Want: []string{ // sorted, as ErrorPaths has them
				"count: Invalid value", "metadata.name: Invalid value",
				"reportingController: Invalid value", "reportingController: Invalid value", "reportingController: Required value",
				"series.count: Invalid value", "series.lastObservedTime: Required value", "source: Invalid value", "type: Invalid value",
			},
		},
		{
			Name: "changed on update",
			Old:  newSeriesEvent(nil),
			Obj: newSeriesEvent(func(e *corev1.Event) {
				e.Message, e.Reason, e.Action = "other", "Other", "Other"
				e.EventTime = metav1.NewMicroTime(e.EventTime.Add(time.Nanosecond))
			}),
			Want: []string{"action: Invalid value", "message: Invalid value", "reason: Invalid value", "reason: Invalid value"},
		},
	}
	registrytest.RunChanges(t, "errors", tests, func(obj, old *corev1.Event) []string {
		if old == nil {
			return registrytest.ErrorPaths(validateCreate(eventsAPI(), obj))
		}
		return registrytest.ErrorPaths(validateUpdate(eventsAPI(), obj, old))
	})
}

// TestValidateCoreAPI: a core/v1 request checks the same event as a legacy one.
func TestValidateCoreAPI(t *testing.T) {
	e := newSeriesEvent(func(e *corev1.Event) { e.Type, e.Count = "Error", 1 })
	if diff := cmp.Diff([]string{}, registrytest.ErrorPaths(validateCreate(context.Background(), e))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
