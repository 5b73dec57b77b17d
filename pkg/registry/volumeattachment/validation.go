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
	"math"
	"slices"
	"unicode/utf8"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/csinode"
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

// validateCreate is what upstream's ValidateVolumeAttachment shows on a
// create in 1.37, after the metadata. The attacher's rules are declared
// on the v1 type as beta, enforced by default: their declarative errors
// replace the handwritten ones of the same kind, and come last, as the
// declarative ones are appended after the rest.
func validateCreate(va *storagev1.VolumeAttachment) field.ErrorList {
	declarative := validateAttacherDeclaratively(va.Spec.Attacher)
	handwritten := slices.DeleteFunc(csinode.ValidateDriverName(va.Spec.Attacher, attacherPath), func(e *field.Error) bool {
		return slices.ContainsFunc(declarative, func(d *field.Error) bool { return d.Type == e.Type })
	})
	errs := append(handwritten, validate(va)...)
	return append(errs, declarative...)
}

// validateUpdate is what upstream's ValidateVolumeAttachmentUpdate shows,
// after the metadata. Declarative validation skips an unchanged spec and
// stops at a changed one, immutable: so no declarative attacher error
// replaces a handwritten one, and the immutability error is the
// declarative one, with no value.
func validateUpdate(va, old *storagev1.VolumeAttachment) field.ErrorList {
	errs := append(csinode.ValidateDriverName(va.Spec.Attacher, attacherPath), validate(va)...)
	if !apiequality.Semantic.DeepEqual(va.Spec, old.Spec) {
		errs = append(errs, field.Invalid(specPath, nil, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateAttacherDeclaratively checks the attacher as the v1 type's
// declared rules do: required (and nothing more if missing), a DNS
// subdomain in any case, and at most 63 characters.
func validateAttacherDeclaratively(attacher string) field.ErrorList {
	if attacher == "" {
		return field.ErrorList{field.Required(attacherPath, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsDNS1123SubdomainCaseless(attacher) {
		errs = append(errs, field.Invalid(attacherPath, attacher, msg))
	}
	// The declared maxLength counts characters: a string of more bytes
	// may pass it, and then the handwritten byte limit is the one shown.
	if len(attacher) > maxAttacherLength && (utf8.RuneCountInString(attacher) > maxAttacherLength || (len(attacher)+3)/4 > maxAttacherLength) {
		errs = append(errs, field.TooLongCharacters(attacherPath, attacher, maxAttacherLength))
	}
	return errs
}

// validate is upstream's ValidateVolumeAttachment but for the metadata and
// the attacher: one volume source, a node name and a persistent volume
// name that are DNS subdomains, and a status within upstream's bounds.
// The node name, unlike the attacher, has no required error: an empty
// one is not a DNS subdomain.
func validate(va *storagev1.VolumeAttachment) field.ErrorList {
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
