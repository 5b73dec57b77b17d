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

package volumeattachment

import (
	"context"
	"math"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/volume"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// Upstream's bounds on an attachment's status.
const (
	maxAttachmentMetadataSize = 256 * (1 << 10)
	maxVolumeErrorMessageSize = 1024
	maxAttacherLength         = 63
)

var (
	specPath     = field.NewPath("spec")
	attacherPath = specPath.Child("attacher")
)

// validateAttachment is upstream's validation of an attachment, less the
// metadata, on a create (old nil) or an update, where spec is immutable:
// the handwritten errors, less those the declarative ones replace, then
// those.
func validateAttachment(va, old *storagev1.VolumeAttachment) field.ErrorList {
	errs := append(volume.CoveredCSIDriverName(va.Spec.Attacher, attacherPath), validateFields(va)...)
	if old != nil {
		immutable := apimachineryvalidation.ValidateImmutableField(va.Spec, old.Spec, specPath)
		for _, e := range immutable {
			e.WithOrigin("immutable").MarkCoveredByDeclarative()
		}
		errs = append(errs, immutable...)
	}
	return registry.WithDeclarative(errs, declarative(va, old))
}

// declarative is what upstream's declarative rules say: on a create, the
// attacher is required, a caseless DNS subdomain of at most 63
// characters; on an update, a changed spec is immutable, and nothing else
// is checked.
func declarative(va, old *storagev1.VolumeAttachment) field.ErrorList {
	ctx := context.Background()
	if old != nil {
		if apiequality.Semantic.DeepEqual(va.Spec, old.Spec) {
			return nil
		}
		return validate.Immutable(ctx, operation.Operation{Type: operation.Update}, specPath, &va.Spec, &old.Spec)
	}
	op := operation.Operation{Type: operation.Create}
	attacher := &va.Spec.Attacher
	if errs := validate.RequiredValue(ctx, op, attacherPath, attacher, nil); len(errs) != 0 {
		return errs
	}
	errs := validate.LongNameCaseless(ctx, op, attacherPath, attacher, nil)
	return append(errs, validate.MaxLength(ctx, op, attacherPath, attacher, nil, maxAttacherLength)...)
}

// validateFields is upstream's ValidateVolumeAttachment but for the
// metadata and the attacher: one volume source, a node name and a
// persistent volume name that are DNS subdomains, and a status within
// upstream's bounds. The node name, unlike the attacher, has no required
// error: an empty one is not a DNS subdomain.
func validateFields(va *storagev1.VolumeAttachment) field.ErrorList {
	spec := &va.Spec
	errs := validateSource(&spec.Source, specPath.Child("source"))
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(spec.NodeName, false) {
		errs = append(errs, field.Invalid(specPath.Child("nodeName"), spec.NodeName, msg))
	}
	errs = append(errs, validateStatus(&va.Status)...)
	if pv := spec.Source.PersistentVolumeName; pv != nil {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(*pv, false) {
			errs = append(errs, field.Invalid(specPath.Child("source", "persistentVolumeName"), *pv, msg))
		}
	}
	return errs
}

const exactlyOneSource = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"

// validateSource is upstream's validateVolumeAttachmentSource: a
// persistent volume by name, or an inline volume spec, not both.
func validateSource(source *storagev1.VolumeAttachmentSource, p *field.Path) field.ErrorList {
	switch {
	case source.InlineVolumeSpec == nil && source.PersistentVolumeName == nil:
		return field.ErrorList{field.Required(p, exactlyOneSource)}
	case source.InlineVolumeSpec != nil && source.PersistentVolumeName != nil:
		return field.ErrorList{field.Forbidden(p, exactlyOneSource)}
	case source.PersistentVolumeName != nil:
		if *source.PersistentVolumeName == "" {
			return field.ErrorList{field.Required(p.Child("persistentVolumeName"), "must specify non empty persistentVolumeName")}
		}
		return nil
	}
	return validateInlineSpec(source.InlineVolumeSpec, p.Child("inlineVolumeSpec"))
}

// validateStatus is upstream's validateVolumeAttachmentStatus: bounded
// metadata and error messages, and error codes that are not negative.
func validateStatus(status *storagev1.VolumeAttachmentStatus) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	size := 0
	for k, v := range status.AttachmentMetadata {
		size += len(k) + len(v)
	}
	if size > maxAttachmentMetadataSize {
		errs = append(errs, field.TooLong(p.Child("attachmentMetadata"), "", maxAttachmentMetadataSize))
	}
	errs = append(errs, validateVolumeError(status.AttachError, p.Child("attachError"))...)
	return append(errs, validateVolumeError(status.DetachError, p.Child("detachError"))...)
}

func validateVolumeError(e *storagev1.VolumeError, p *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var errs field.ErrorList
	if len(e.Message) > maxVolumeErrorMessageSize {
		errs = append(errs, field.TooLong(p.Child("message"), "", maxVolumeErrorMessageSize))
	}
	if e.ErrorCode != nil && *e.ErrorCode < 0 {
		errs = append(errs, field.Invalid(p.Child("errorCode"), *e.ErrorCode, validation.InclusiveRangeError(0, math.MaxInt32)))
	}
	return errs
}
