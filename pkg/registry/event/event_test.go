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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func newEvent(mutate func(*corev1.Event)) *corev1.Event {
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.17a", Namespace: "prod", UID: "uid-1", ResourceVersion: "1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "prod", Name: "web", APIVersion: "v1"},
		Reason:         "Started",
		Message:        "Started container app",
		Type:           corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "kubelet"},
		Count:          1,
	}
	if mutate != nil {
		mutate(e)
	}
	return e
}

func TestStorage(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "events")
	if !rest.NamespaceScoped() {
		t.Errorf("NamespaceScoped: got false, want true")
	}
	if diff := cmp.Diff([]string{"ev"}, rest.ShortNames()); diff != "" {
		t.Errorf("ShortNames (-want +got):\n%s", diff)
	}
	// Event recorders PUT events they have not created yet.
	if !rest.UpdateStrategy.AllowCreateOnUpdate(context.Background()) {
		t.Errorf("AllowCreateOnUpdate: got false, want true")
	}
}

func TestValidate(t *testing.T) {
	tests := []registrytest.Change[*corev1.Event]{
		{Name: "valid", Obj: newEvent(nil), Want: []string{}},
		{Name: "warning", Obj: newEvent(func(e *corev1.Event) { e.Type = corev1.EventTypeWarning }), Want: []string{}},
		{Name: "no type", Obj: newEvent(func(e *corev1.Event) { e.Type = "" }), Want: []string{}},
		{
			Name: "any type, as core/v1 takes it",
			Obj:  newEvent(func(e *corev1.Event) { e.Type = "Error" }),
			Want: []string{},
		},
		{
			Name: "involved object in another namespace",
			Obj:  newEvent(func(e *corev1.Event) { e.InvolvedObject.Namespace = "dev" }),
			Want: []string{"involvedObject.namespace: Invalid value"},
		},
		{
			Name: "a name no DNS subdomain, left to rest.ValidateCreate's path segment check",
			Obj:  newEvent(func(e *corev1.Event) { e.Name = "Web!" }),
			Want: []string{},
		},
	}
	rest := registrytest.REST(t, NewStorage, "events")
	registrytest.ValidateChanges(t, rest.CreateStrategy, registrytest.ErrorPaths, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Change[*corev1.Event]{
		{
			Name: "count and message may change",
			Obj:  newEvent(func(e *corev1.Event) { e.Count, e.Message = 2, "Started again" }),
			Want: []string{},
		},
		{
			Name: "any type, as core/v1 takes it",
			Obj:  newEvent(func(e *corev1.Event) { e.Type = "Error" }),
			Want: []string{},
		},
		{
			Name: "involved object in another namespace",
			Obj:  newEvent(func(e *corev1.Event) { e.InvolvedObject.Namespace = "dev" }),
			Want: []string{"involvedObject.namespace: Invalid value"},
		},
		{
			Name: "name is immutable",
			Obj:  newEvent(func(e *corev1.Event) { e.Name = "web.17b" }),
			Want: []string{"metadata.name: Invalid value"},
		},
	}
	rest := registrytest.REST(t, NewStorage, "events")
	registrytest.RunChanges(t, "ValidateUpdate errors", tests, func(obj, _ *corev1.Event) []string {
		return registrytest.ErrorPaths(registrytest.ValidateUpdate(rest.UpdateStrategy, obj, newEvent(nil)))
	})
}

func TestFieldSelectors(t *testing.T) {
	rest := registrytest.REST(t, NewStorage, "events")
	e := newEvent(func(e *corev1.Event) { e.Type = corev1.EventTypeWarning })
	registrytest.CheckFields(t, rest, e, api.EventFields(e))
	tests := []struct {
		selector string
		want     bool
	}{
		{selector: "involvedObject.kind=Pod,involvedObject.name=web", want: true},
		{selector: "involvedObject.name=db", want: false},
		{selector: "type=Warning", want: true},
		{selector: "source=kubelet,reason=Started", want: true},
		{selector: "metadata.namespace=dev", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			pred := rest.PredicateFunc(labels.Everything(), fields.ParseSelectorOrDie(tt.selector))
			got, err := pred.Matches(e)
			if err != nil || got != tt.want {
				t.Errorf("Matches(%q): got (%v, %v), want (%v, nil)", tt.selector, got, err, tt.want)
			}
		})
	}
}

// TestTable: the columns and cells of upstream's event printer (the wide
// ones, as a server's Table is), for the core API's events and the
// events.k8s.io API's (eventTime, series, no count).
func TestTable(t *testing.T) {
	tenMinutesAgo := time.Now().Add(-10 * time.Minute)
	threeDaysAgo := time.Now().Add(-72 * time.Hour)
	tests := []struct {
		name  string
		event *corev1.Event
		// want: Last Seen, Object, Source, First Seen, Count.
		want []any
	}{
		{
			name: "core event",
			event: newEvent(func(e *corev1.Event) {
				e.FirstTimestamp, e.LastTimestamp, e.Count = metav1.NewTime(threeDaysAgo), metav1.NewTime(tenMinutesAgo), 4
				e.Source.Host = "node-1"
			}),
			want: []any{"10m", "pod/web", "kubelet, node-1", "3d", int64(4)},
		},
		{
			name: "events.k8s.io singleton: eventTime, no count",
			event: newEvent(func(e *corev1.Event) {
				e.EventTime, e.Count = metav1.NewMicroTime(threeDaysAgo), 0
				e.Source, e.ReportingController, e.ReportingInstance = corev1.EventSource{}, "ctrl", "ctrl-0"
			}),
			want: []any{"3d", "pod/web", "ctrl, ctrl-0", "3d", int64(1)},
		},
		{
			name: "events.k8s.io series",
			event: newEvent(func(e *corev1.Event) {
				e.EventTime = metav1.NewMicroTime(threeDaysAgo)
				e.Series = &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(tenMinutesAgo)}
			}),
			want: []any{"10m", "pod/web", "kubelet", "3d", int64(7)},
		},
		{
			name:  "no time at all (upstream does not fall back to creationTimestamp)",
			event: newEvent(func(e *corev1.Event) { e.CreationTimestamp = metav1.NewTime(tenMinutesAgo) }),
			want:  []any{"<unknown>", "pod/web", "kubelet", "<unknown>", int64(1)},
		},
		{
			name:  "an object without a name",
			event: newEvent(func(e *corev1.Event) { e.InvolvedObject.Name = "" }),
			want:  []any{"<unknown>", "pod", "kubelet", "<unknown>", int64(1)},
		},
	}
	rest := registrytest.REST(t, NewStorage, "events")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := rest.ConvertToTable(context.Background(), tt.event, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			wantColumns := []string{"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"}
			if diff := cmp.Diff(wantColumns, registrytest.ColumnNames(table)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 || len(table.Rows[0].Cells) != len(wantColumns) {
				t.Fatalf("rows: got %v, want one with %d cells", table.Rows, len(wantColumns))
			}
			c := table.Rows[0].Cells
			want := []any{tt.want[0], "Normal", "Started", tt.want[1], "", tt.want[2], "Started container app", tt.want[3], tt.want[4], "web.17a"}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
