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

package api

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

var (
	testEventTime      = metav1.NewMicroTime(time.Date(2024, 5, 1, 12, 0, 0, 123456000, time.UTC))
	testEventFirstSeen = metav1.NewTime(time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC))
	testEventLastSeen  = metav1.NewTime(time.Date(2024, 5, 1, 11, 30, 0, 0, time.UTC))
	testEventObserved  = metav1.NewMicroTime(time.Date(2024, 5, 1, 12, 5, 0, 0, time.UTC))
)

func eventMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: "web.17a", Namespace: "prod", UID: "uid-e", ResourceVersion: "42",
		Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"},
	}
}

var (
	testEventRegarding = corev1.ObjectReference{
		Kind: "Pod", Namespace: "prod", Name: "web", UID: "uid-p", APIVersion: "v1", ResourceVersion: "7", FieldPath: "spec.containers{app}",
	}
	testEventRelated = corev1.ObjectReference{Kind: "Node", Name: "node-1", UID: "uid-n", APIVersion: "v1"}
)

// newEventsV1 is an events.k8s.io/v1 Event with every field set.
func newEventsV1() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta:               eventMeta(),
		EventTime:                testEventTime,
		Series:                   &eventsv1.EventSeries{Count: 4, LastObservedTime: testEventObserved},
		ReportingController:      "example.com/controller",
		ReportingInstance:        "controller-0",
		Action:                   "Binding",
		Reason:                   "Scheduled",
		Regarding:                testEventRegarding,
		Related:                  testEventRelated.DeepCopy(),
		Note:                     "Successfully assigned prod/web to node-1",
		Type:                     corev1.EventTypeNormal,
		DeprecatedSource:         corev1.EventSource{Component: "scheduler", Host: "cp-1"},
		DeprecatedFirstTimestamp: testEventFirstSeen,
		DeprecatedLastTimestamp:  testEventLastSeen,
		DeprecatedCount:          3,
	}
}

// newCoreEvent is the core Event newEventsV1 converts to.
func newCoreEvent() *corev1.Event {
	return &corev1.Event{
		ObjectMeta:          eventMeta(),
		InvolvedObject:      testEventRegarding,
		Reason:              "Scheduled",
		Message:             "Successfully assigned prod/web to node-1",
		Source:              corev1.EventSource{Component: "scheduler", Host: "cp-1"},
		FirstTimestamp:      testEventFirstSeen,
		LastTimestamp:       testEventLastSeen,
		Count:               3,
		Type:                corev1.EventTypeNormal,
		EventTime:           testEventTime,
		Series:              &corev1.EventSeries{Count: 4, LastObservedTime: testEventObserved},
		Action:              "Binding",
		Related:             testEventRelated.DeepCopy(),
		ReportingController: "example.com/controller",
		ReportingInstance:   "controller-0",
	}
}

func TestConvertEventsV1ToCore(t *testing.T) {
	in := newEventsV1()
	out := &corev1.Event{}
	if err := Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("Convert: got error %v, want none", err)
	}
	if diff := cmp.Diff(newCoreEvent(), out); diff != "" {
		t.Errorf("core event (-want +got):\n%s", diff)
	}
	// The output shares nothing with the input.
	out.Labels["team"] = "b"
	out.Annotations["note"] = "y"
	out.Related.Name = "node-2"
	out.Series.Count = 99
	out.InvolvedObject.Name = "other"
	if diff := cmp.Diff(newEventsV1(), in); diff != "" {
		t.Errorf("input after changing the output (-want +got):\n%s", diff)
	}
}

func TestConvertCoreToEventsV1(t *testing.T) {
	in := newCoreEvent()
	out := &eventsv1.Event{}
	if err := Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("Convert: got error %v, want none", err)
	}
	if diff := cmp.Diff(newEventsV1(), out); diff != "" {
		t.Errorf("events.k8s.io/v1 event (-want +got):\n%s", diff)
	}
	out.Labels["team"] = "b"
	out.Annotations["note"] = "y"
	out.Related.Name = "node-2"
	out.Series.Count = 99
	out.Regarding.Name = "other"
	if diff := cmp.Diff(newCoreEvent(), in); diff != "" {
		t.Errorf("input after changing the output (-want +got):\n%s", diff)
	}
}

func TestConvertEventOptionalFields(t *testing.T) {
	t.Run("no series or related", func(t *testing.T) {
		in := newEventsV1()
		in.Series, in.Related = nil, nil
		out := &corev1.Event{}
		if err := Scheme.Convert(in, out, nil); err != nil {
			t.Fatalf("Convert: got error %v, want none", err)
		}
		if out.Series != nil || out.Related != nil {
			t.Errorf("series, related: got %v, %v, want nil", out.Series, out.Related)
		}
		back := &eventsv1.Event{}
		if err := Scheme.Convert(out, back, nil); err != nil {
			t.Fatalf("Convert back: got error %v, want none", err)
		}
		if diff := cmp.Diff(in, back); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	})
	t.Run("into a used object", func(t *testing.T) {
		// Conversion replaces what the output held.
		out := newCoreEvent()
		out.Labels["stale"] = "yes"
		out.Series = &corev1.EventSeries{Count: 1}
		in := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "prod"}, Note: "hello"}
		if err := Scheme.Convert(in, out, nil); err != nil {
			t.Fatalf("Convert: got error %v, want none", err)
		}
		want := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "prod"}, Message: "hello"}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("core event (-want +got):\n%s", diff)
		}
	})
}

func TestConvertEventRoundTrips(t *testing.T) {
	core := &corev1.Event{}
	if err := Scheme.Convert(newEventsV1(), core, nil); err != nil {
		t.Fatalf("Convert to core: got error %v, want none", err)
	}
	back := &eventsv1.Event{}
	if err := Scheme.Convert(core, back, nil); err != nil {
		t.Fatalf("Convert back: got error %v, want none", err)
	}
	if diff := cmp.Diff(newEventsV1(), back); diff != "" {
		t.Errorf("events.k8s.io/v1 round trip (-want +got):\n%s", diff)
	}
	v1 := &eventsv1.Event{}
	if err := Scheme.Convert(newCoreEvent(), v1, nil); err != nil {
		t.Fatalf("Convert to events.k8s.io/v1: got error %v, want none", err)
	}
	coreBack := &corev1.Event{}
	if err := Scheme.Convert(v1, coreBack, nil); err != nil {
		t.Fatalf("Convert back: got error %v, want none", err)
	}
	if diff := cmp.Diff(newCoreEvent(), coreBack); diff != "" {
		t.Errorf("core round trip (-want +got):\n%s", diff)
	}
}

func TestConvertEventLists(t *testing.T) {
	listMeta := metav1.ListMeta{ResourceVersion: "100", Continue: "next", RemainingItemCount: ptr.To[int64](2)}
	second := newEventsV1()
	second.Name, second.Note, second.Series = "web.17b", "second", nil
	secondCore := newCoreEvent()
	secondCore.Name, secondCore.Message, secondCore.Series = "web.17b", "second", nil

	t.Run("events.k8s.io/v1 to core", func(t *testing.T) {
		in := &eventsv1.EventList{ListMeta: listMeta, Items: []eventsv1.Event{*newEventsV1(), *second}}
		out := &corev1.EventList{}
		if err := Scheme.Convert(in, out, nil); err != nil {
			t.Fatalf("Convert: got error %v, want none", err)
		}
		want := &corev1.EventList{ListMeta: listMeta, Items: []corev1.Event{*newCoreEvent(), *secondCore}}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("core list (-want +got):\n%s", diff)
		}
		out.Items[0].Labels["team"] = "b"
		if got := in.Items[0].Labels["team"]; got != "a" {
			t.Errorf("input label after changing the output's: got %q, want a", got)
		}
	})
	t.Run("core to events.k8s.io/v1", func(t *testing.T) {
		in := &corev1.EventList{ListMeta: listMeta, Items: []corev1.Event{*newCoreEvent(), *secondCore}}
		out := &eventsv1.EventList{}
		if err := Scheme.Convert(in, out, nil); err != nil {
			t.Fatalf("Convert: got error %v, want none", err)
		}
		want := &eventsv1.EventList{ListMeta: listMeta, Items: []eventsv1.Event{*newEventsV1(), *second}}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("events.k8s.io/v1 list (-want +got):\n%s", diff)
		}
		out.Items[1].Labels["team"] = "b"
		if got := in.Items[1].Labels["team"]; got != "a" {
			t.Errorf("input label after changing the output's: got %q, want a", got)
		}
	})
	t.Run("empty lists", func(t *testing.T) {
		out := &corev1.EventList{Items: []corev1.Event{*newCoreEvent()}}
		if err := Scheme.Convert(&eventsv1.EventList{}, out, nil); err != nil {
			t.Fatalf("Convert: got error %v, want none", err)
		}
		if len(out.Items) != 0 {
			t.Errorf("items: got %d, want 0", len(out.Items))
		}
	})
}

// TestConvertEventToVersion converts as the generic handlers do: to the
// served version and to the events.k8s.io hub (the core Event).
func TestConvertEventToVersion(t *testing.T) {
	eventsInternal := schema.GroupVersion{Group: eventsv1.GroupName, Version: runtime.APIVersionInternal}
	t.Run("core to events.k8s.io/v1", func(t *testing.T) {
		out, err := Scheme.ConvertToVersion(newCoreEvent(), eventsv1.SchemeGroupVersion)
		if err != nil {
			t.Fatalf("ConvertToVersion: got error %v, want none", err)
		}
		got, ok := out.(*eventsv1.Event)
		if !ok {
			t.Fatalf("ConvertToVersion: got %T, want *eventsv1.Event", out)
		}
		want := newEventsV1()
		want.TypeMeta = metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("converted event (-want +got):\n%s", diff)
		}
	})
	t.Run("events.k8s.io/v1 to its hub", func(t *testing.T) {
		out, err := Scheme.ConvertToVersion(newEventsV1(), eventsInternal)
		if err != nil {
			t.Fatalf("ConvertToVersion: got error %v, want none", err)
		}
		got, ok := out.(*corev1.Event)
		if !ok {
			t.Fatalf("ConvertToVersion: got %T, want *corev1.Event", out)
		}
		got.TypeMeta = metav1.TypeMeta{}
		if diff := cmp.Diff(newCoreEvent(), got); diff != "" {
			t.Errorf("converted event (-want +got):\n%s", diff)
		}
	})
	t.Run("core list to events.k8s.io/v1", func(t *testing.T) {
		out, err := Scheme.ConvertToVersion(&corev1.EventList{Items: []corev1.Event{*newCoreEvent()}}, eventsv1.SchemeGroupVersion)
		if err != nil {
			t.Fatalf("ConvertToVersion: got error %v, want none", err)
		}
		got, ok := out.(*eventsv1.EventList)
		if !ok || len(got.Items) != 1 || got.Items[0].Note != newCoreEvent().Message {
			t.Errorf("ConvertToVersion: got %#v, want an events.k8s.io/v1 list of the event", out)
		}
	})
}

func TestEventsV1FieldLabels(t *testing.T) {
	kind := eventsv1.SchemeGroupVersion.WithKind("Event")
	tests := []struct {
		label     string
		wantLabel string
		wantErr   bool
	}{
		{label: "metadata.name", wantLabel: "metadata.name"},
		{label: "metadata.namespace", wantLabel: "metadata.namespace"},
		{label: "reason", wantLabel: "reason"},
		{label: "type", wantLabel: "type"},
		{label: "regarding.kind", wantLabel: "involvedObject.kind"},
		{label: "regarding.namespace", wantLabel: "involvedObject.namespace"},
		{label: "regarding.name", wantLabel: "involvedObject.name"},
		{label: "regarding.uid", wantLabel: "involvedObject.uid"},
		{label: "regarding.apiVersion", wantLabel: "involvedObject.apiVersion"},
		{label: "regarding.resourceVersion", wantLabel: "involvedObject.resourceVersion"},
		{label: "regarding.fieldPath", wantLabel: "involvedObject.fieldPath"},
		{label: "reportingController", wantLabel: "reportingComponent"},
		{label: "involvedObject.name", wantErr: true},
		{label: "reportingComponent", wantErr: true},
		{label: "note", wantErr: true},
		{label: "source", wantErr: true},
		{label: "regarding", wantErr: true},
		{label: "Regarding.name", wantErr: true},
		{label: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			label, value, err := Scheme.ConvertFieldLabel(kind, tt.label, "some-value")
			if tt.wantErr {
				if err == nil {
					t.Errorf("ConvertFieldLabel(%q): got (%q, %q, nil), want an error", tt.label, label, value)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConvertFieldLabel(%q): got error %v, want none", tt.label, err)
			}
			if label != tt.wantLabel || value != "some-value" {
				t.Errorf("ConvertFieldLabel(%q): got (%q, %q), want (%q, %q)", tt.label, label, value, tt.wantLabel, "some-value")
			}
		})
	}
}

// TestEventsV1FieldLabelsMatchEventFields: every events.k8s.io label maps
// onto a field of the core Event's field set, which selectors are matched against.
func TestEventsV1FieldLabelsMatchEventFields(t *testing.T) {
	set := EventFields(newCoreEvent())
	var mapped []string
	for label, target := range eventsV1FieldLabels {
		if _, ok := set[target]; !ok {
			t.Errorf("events.k8s.io label %q maps to %q: not in EventFields", label, target)
		}
		mapped = append(mapped, target)
	}
	// And every core field but source (deprecated, no events.k8s.io name) has one.
	for field := range set {
		if field != "source" && !slices.Contains(mapped, field) {
			t.Errorf("EventFields %q: no events.k8s.io label maps to it", field)
		}
	}
	// The value a selector names is matched against the converted event.
	for label, want := range map[string]string{
		"regarding.name":      newEventsV1().Regarding.Name,
		"reportingController": newEventsV1().ReportingController,
		"regarding.fieldPath": newEventsV1().Regarding.FieldPath,
	} {
		target, _, err := Scheme.ConvertFieldLabel(eventsv1.SchemeGroupVersion.WithKind("Event"), label, want)
		if err != nil {
			t.Fatalf("ConvertFieldLabel(%q): %v", label, err)
		}
		if got := set[target]; got != want {
			t.Errorf("EventFields[%q] (from %q): got %q, want %q", target, label, got, want)
		}
	}
}
