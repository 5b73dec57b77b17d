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
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// The length limits of upstream's events.go.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

// strict reports whether the request came through events.k8s.io: upstream
// checks those events fully, and those of core/v1 as legacy events only,
// for backwards compatibility.
func strict(ctx context.Context) bool {
	info, ok := genericapirequest.RequestInfoFrom(ctx)
	return ok && info.APIGroup == eventsv1.GroupName
}

// validateCreate checks a new event as upstream's ValidateEventCreate does.
func validateCreate(ctx context.Context, e *corev1.Event) field.ErrorList {
	errs := validateLegacy(e, strict(ctx))
	if !strict(ctx) {
		return errs
	}
	errs = append(errs, apimachineryvalidation.ValidateObjectMeta(&e.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, registry.ValidateFinalizerNames(e.Finalizers)...)
	errs = append(errs, validateSeries(e)...)
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	unset := func(name string, set bool) {
		if set {
			errs = append(errs, field.Invalid(field.NewPath(name), "", "needs to be unset"))
		}
	}
	unset("firstTimestamp", !e.FirstTimestamp.IsZero())
	unset("lastTimestamp", !e.LastTimestamp.IsZero())
	unset("count", e.Count != 0)
	unset("source", e.Source.Component != "" || e.Source.Host != "")
	return errs
}

// validateUpdate checks an event's update as upstream's ValidateEventUpdate does.
func validateUpdate(ctx context.Context, e, old *corev1.Event) field.ErrorList {
	errs := validateLegacy(e, strict(ctx))
	if !strict(ctx) {
		return errs
	}
	errs = append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	errs = append(errs, registry.ValidateFinalizerNames(e.Finalizers)...)
	if !reflect.DeepEqual(e.Series, old.Series) {
		errs = append(errs, validateSeries(e)...)
	}
	immutable := func(name string, now, was any) {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(now, was, field.NewPath(name))...)
	}
	immutable("involvedObject", e.InvolvedObject, old.InvolvedObject)
	immutable("reason", e.Reason, old.Reason)
	immutable("message", e.Message, old.Message)
	immutable("source", e.Source, old.Source)
	immutable("firstTimestamp", e.FirstTimestamp, old.FirstTimestamp)
	immutable("lastTimestamp", e.LastTimestamp, old.LastTimestamp)
	immutable("count", e.Count, old.Count)
	immutable("reason", e.Reason, old.Reason) // sic, twice, as upstream
	immutable("type", e.Type, old.Type)
	// changes below a microsecond are tolerated: clients truncate to it
	if !e.EventTime.Truncate(time.Microsecond).UTC().Equal(old.EventTime.Truncate(time.Microsecond).UTC()) {
		immutable("eventTime", e.EventTime, old.EventTime)
	}
	immutable("action", e.Action, old.Action)
	immutable("related", e.Related, old.Related)
	immutable("reportingController", e.ReportingController, old.ReportingController)
	immutable("reportingInstance", e.ReportingInstance, old.ReportingInstance)
	return errs
}

// validateSeries checks series, if set, as upstream's validateV1EventSeries does.
func validateSeries(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	if e.Series == nil {
		return nil
	}
	if e.Series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if e.Series.LastObservedTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}

// validateLegacy checks what every event must pass, as upstream's
// legacyValidateEvent does: an event without eventTime is an old one,
// whose involved object must be in its namespace; a new one must say who
// reported it, and how. core/v1 calls reportingController reportingComponent.
func validateLegacy(e *corev1.Event, strict bool) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	mismatch := func() {
		errs = append(errs, field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if e.EventTime.IsZero() {
		switch ns := e.InvolvedObject.Namespace; {
		case ns == "" && e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault:
			mismatch() // old clients put events about cluster-scoped objects in default
		case ns != "" && ns != e.Namespace:
			mismatch()
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		mismatch()
	}
	controllerPath := field.NewPath("reportingComponent")
	if strict {
		controllerPath = field.NewPath("reportingController")
	}
	if e.ReportingController == "" {
		errs = append(errs, field.Required(controllerPath, ""))
	}
	for _, msg := range validation.IsQualifiedName(e.ReportingController) {
		errs = append(errs, field.Invalid(controllerPath, e.ReportingController, msg))
	}
	errs = append(errs, requiredWithin("reportingInstance", e.ReportingInstance, reportingInstanceLengthLimit, true)...)
	errs = append(errs, requiredWithin("action", e.Action, actionLengthLimit, true)...)
	errs = append(errs, requiredWithin("reason", e.Reason, reasonLengthLimit, true)...)
	return append(errs, requiredWithin("message", e.Message, noteLengthLimit, false)...)
}

// requiredWithin checks the field name is at most limit bytes long and,
// if required, not empty.
func requiredWithin(name, value string, limit int, required bool) field.ErrorList {
	var errs field.ErrorList
	if required && value == "" {
		errs = append(errs, field.Required(field.NewPath(name), ""))
	}
	if len(value) > limit {
		errs = append(errs, field.Invalid(field.NewPath(name), "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return errs
}
