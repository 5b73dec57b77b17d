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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// addEventConversions converts events.k8s.io/v1 Events to and from core
// Events, their hub and storage form, as upstream's
// pkg/apis/events/v1/conversion.go does: regarding is involvedObject,
// note is message, and the deprecated* fields are the core ones.
func addEventConversions(s *runtime.Scheme) error {
	for _, c := range []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*eventsv1.Event)(nil), (*corev1.Event)(nil), func(a, b any, _ conversion.Scope) error {
			eventToCore(a.(*eventsv1.Event), b.(*corev1.Event))
			return nil
		}},
		{(*corev1.Event)(nil), (*eventsv1.Event)(nil), func(a, b any, _ conversion.Scope) error {
			eventFromCore(a.(*corev1.Event), b.(*eventsv1.Event))
			return nil
		}},
		{(*eventsv1.EventList)(nil), (*corev1.EventList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*eventsv1.EventList), b.(*corev1.EventList)
			out.ListMeta = in.ListMeta
			out.Items = make([]corev1.Event, len(in.Items))
			for i := range in.Items {
				eventToCore(&in.Items[i], &out.Items[i])
			}
			return nil
		}},
		{(*corev1.EventList)(nil), (*eventsv1.EventList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*corev1.EventList), b.(*eventsv1.EventList)
			out.ListMeta = in.ListMeta
			out.Items = make([]eventsv1.Event, len(in.Items))
			for i := range in.Items {
				eventFromCore(&in.Items[i], &out.Items[i])
			}
			return nil
		}},
	} {
		if err := s.AddConversionFunc(c.a, c.b, c.fn); err != nil {
			return err
		}
	}
	return nil
}

func eventToCore(in *eventsv1.Event, out *corev1.Event) {
	*out = corev1.Event{
		ObjectMeta:          *in.ObjectMeta.DeepCopy(),
		InvolvedObject:      in.Regarding,
		Reason:              in.Reason,
		Message:             in.Note,
		Source:              in.DeprecatedSource,
		FirstTimestamp:      in.DeprecatedFirstTimestamp,
		LastTimestamp:       in.DeprecatedLastTimestamp,
		Count:               in.DeprecatedCount,
		Type:                in.Type,
		EventTime:           in.EventTime,
		Action:              in.Action,
		Related:             in.Related.DeepCopy(),
		ReportingController: in.ReportingController,
		ReportingInstance:   in.ReportingInstance,
	}
	if in.Series != nil {
		out.Series = &corev1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
}

func eventFromCore(in *corev1.Event, out *eventsv1.Event) {
	*out = eventsv1.Event{
		ObjectMeta:               *in.ObjectMeta.DeepCopy(),
		EventTime:                in.EventTime,
		ReportingController:      in.ReportingController,
		ReportingInstance:        in.ReportingInstance,
		Action:                   in.Action,
		Reason:                   in.Reason,
		Regarding:                in.InvolvedObject,
		Related:                  in.Related.DeepCopy(),
		Note:                     in.Message,
		Type:                     in.Type,
		DeprecatedSource:         in.Source,
		DeprecatedFirstTimestamp: in.FirstTimestamp,
		DeprecatedLastTimestamp:  in.LastTimestamp,
		DeprecatedCount:          in.Count,
	}
	if in.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: in.Series.Count, LastObservedTime: in.Series.LastObservedTime}
	}
}

// eventsV1FieldLabels maps events.k8s.io/v1 field selectors onto the core
// Event's field set (EventFields), as upstream's AddFieldLabelConversionsForEvent.
var eventsV1FieldLabels = map[string]string{
	"metadata.name":             "metadata.name",
	"metadata.namespace":        "metadata.namespace",
	"reason":                    "reason",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"type":                      "type",
}

func eventsV1FieldLabel(label, value string) (string, string, error) {
	mapped, ok := eventsV1FieldLabels[label]
	if !ok {
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
	return mapped, value, nil
}
