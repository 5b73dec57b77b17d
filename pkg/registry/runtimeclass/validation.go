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

package runtimeclass

import (
	"context"

	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/pod"
)

var handlerPath = field.NewPath("handler")

// validateClass is upstream's ValidateRuntimeClass, less the metadata, on
// a create (old nil) or an update, where the handler is immutable, with
// what 1.37's declarative validation (beta, on by default) makes of it:
// the handler's errors of a create, and its immutability error (with no
// value), are the declarative ones, reported after all other errors.
func validateClass(rc, old *nodev1.RuntimeClass) field.ErrorList {
	errs := validateHandler(rc.Handler)
	if rc.Overhead != nil {
		errs = append(errs, pod.ValidateOverhead(rc.Overhead.PodFixed, field.NewPath("overhead"))...)
	}
	if s := rc.Scheduling; s != nil {
		p := field.NewPath("scheduling")
		if s.NodeSelector != nil {
			errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, p.Child("nodeSelector"))...)
		}
		errs = append(errs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
	}
	if old != nil {
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(rc.Handler, old.Handler, handlerPath).MarkCoveredByDeclarative().WithOrigin("immutable")...)
	}
	return registry.WithDeclarative(errs, declarativeHandler(rc, old))
}

// validateHandler: a handler is required, and a DNS label.
func validateHandler(handler string) field.ErrorList {
	if handler == "" {
		return field.ErrorList{field.Required(handlerPath, "").MarkCoveredByDeclarative()}
	}
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSLabel(handler, false) {
		errs = append(errs, field.Invalid(handlerPath, handler, msg).MarkCoveredByDeclarative().WithOrigin("format=k8s-short-name"))
	}
	return errs
}

// declarativeHandler is the handler's declarative validation: none of an
// unchanged one; immutable, required, and then a short name.
func declarativeHandler(rc, old *nodev1.RuntimeClass) field.ErrorList {
	ctx, op := context.Background(), operation.Operation{Type: operation.Create}
	var oldHandler *string
	if old != nil {
		if rc.Handler == old.Handler {
			return nil
		}
		op.Type, oldHandler = operation.Update, &old.Handler
	}
	errs := validate.Immutable(ctx, op, handlerPath, &rc.Handler, oldHandler)
	errs = append(errs, validate.RequiredValue(ctx, op, handlerPath, &rc.Handler, oldHandler)...)
	if len(errs) > 0 {
		return errs
	}
	return validate.ShortName(ctx, op, handlerPath, &rc.Handler, oldHandler)
}
