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

package pod

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// updatableFields are those upstream's message names.
var updatableFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodSpecUpdate is the spec part of upstream's ValidatePodUpdate:
// a running pod may change its containers' images, lower its
// activeDeadlineSeconds, add tolerations (and change their
// tolerationSeconds), drop scheduling gates, and while gated add to its
// node selector and required node affinity; any other change is Forbidden
// with the diff upstream shows.
func validatePodSpecUpdate(spec, old *corev1.PodSpec) field.ErrorList {
	specPath := field.NewPath("spec")
	errs, stop := containerUpdates(spec.Containers, old.Containers, specPath.Child("containers"))
	if stop {
		return errs
	}
	initErrs, stop := containerUpdates(spec.InitContainers, old.InitContainers, specPath.Child("initContainers"))
	if errs = append(errs, initErrs...); stop {
		return errs
	}
	deadlinePath := specPath.Child("activeDeadlineSeconds")
	switch d := spec.ActiveDeadlineSeconds; {
	case d != nil && (*d < 0 || *d > math.MaxInt32):
		return append(errs, field.Invalid(deadlinePath, *d, validation.InclusiveRangeError(0, math.MaxInt32)))
	case d != nil && old.ActiveDeadlineSeconds != nil && *old.ActiveDeadlineSeconds < *d:
		return append(errs, field.Invalid(deadlinePath, *d, "must be less than or equal to previous value"))
	case d == nil && old.ActiveDeadlineSeconds != nil:
		errs = append(errs, field.Invalid(deadlinePath, d, "must not update from a positive integer to nil value"))
	}
	errs = append(errs, onlyAddedTolerations(spec.Tolerations, old.Tolerations, specPath.Child("tolerations"))...)
	errs = append(errs, onlyDeletedSchedulingGates(spec.SchedulingGates, old.SchedulingGates, specPath.Child("schedulingGates"))...)
	if apiequality.Semantic.DeepEqual(spec, old) {
		return errs
	}

	munged := spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.ActiveDeadlineSeconds
	munged.SchedulingGates = old.SchedulingGates
	munged.Tolerations = old.Tolerations
	if g := old.TerminationGracePeriodSeconds; g != nil && *g < 0 && munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = g
	}
	if len(old.SchedulingGates) > 0 {
		errs = append(errs, gatedPodUpdates(munged, old, specPath)...)
	}
	if !apiequality.Semantic.DeepEqual(munged, old) {
		errs = append(errs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatableFields, ","), registry.Diff(*old, *munged))))
	}
	return errs
}

// containerUpdates is upstream's ValidateContainerUpdates: the same
// number of containers (else stop), each with an image.
func containerUpdates(containers, old []corev1.Container, path *field.Path) (field.ErrorList, bool) {
	if len(containers) != len(old) {
		return field.ErrorList{field.Forbidden(path, "pod updates may not add or remove containers")}, true
	}
	var errs field.ErrorList
	for i, c := range containers {
		if c.Image == "" {
			errs = append(errs, field.Required(path.Index(i).Child("image"), ""))
		}
		if strings.TrimSpace(c.Image) != c.Image {
			errs = append(errs, field.Invalid(path.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs, false
}

// onlyAddedTolerations is upstream's validateOnlyAddedTolerations: each
// old toleration kept, but for its tolerationSeconds.
func onlyAddedTolerations(tolerations, old []corev1.Toleration, path *field.Path) field.ErrorList {
	for _, o := range old {
		if !slices.ContainsFunc(tolerations, func(t corev1.Toleration) bool {
			o.TolerationSeconds = t.TolerationSeconds
			return reflect.DeepEqual(o, t)
		}) {
			return field.ErrorList{field.Forbidden(path, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return ValidateTolerations(tolerations, path)
}

// onlyDeletedSchedulingGates is upstream's validateOnlyDeletedSchedulingGates:
// a new gate named at its last index, in the gates' order (upstream's is
// a map's).
func onlyDeletedSchedulingGates(gates, old []corev1.PodSchedulingGate, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, g := range gates {
		named := func(o corev1.PodSchedulingGate) bool { return o.Name == g.Name }
		if !slices.ContainsFunc(old, named) && !slices.ContainsFunc(gates[i+1:], named) {
			errs = append(errs, field.Forbidden(path.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

// gatedPodUpdates is upstream's check of a gated pod's update: additions
// to its node selector and to its required node affinity's terms are
// allowed (and taken out of munged, as upstream munges them).
func gatedPodUpdates(munged, old *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(munged.NodeSelector, old.NodeSelector) {
		for k, v := range old.NodeSelector {
			if w, ok := munged.NodeSelector[k]; !ok || v != w {
				errs = append(errs, field.Invalid(specPath.Child("nodeSelector"), munged.NodeSelector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.NodeSelector
	}
	var oldAffinity, affinity *corev1.NodeAffinity
	if old.Affinity != nil {
		oldAffinity = old.Affinity.NodeAffinity
	}
	if munged.Affinity != nil {
		affinity = munged.Affinity.NodeAffinity
	}
	if apiequality.Semantic.DeepEqual(oldAffinity, affinity) {
		return errs
	}
	errs = append(errs, nodeAffinityUpdates(affinity, oldAffinity, specPath.Child("affinity", "nodeAffinity"))...)
	switch {
	case munged.Affinity == nil:
		if oldAffinity != nil {
			munged.Affinity = &corev1.Affinity{NodeAffinity: oldAffinity}
		}
	case old.Affinity == nil && munged.Affinity.PodAffinity == nil && munged.Affinity.PodAntiAffinity == nil:
		munged.Affinity = nil
	default:
		munged.Affinity.NodeAffinity = oldAffinity
	}
	return errs
}

// nodeAffinityUpdates is upstream's validateNodeAffinityMutation: the
// required terms, if there were any, are as many, each with only
// requirements added.
func nodeAffinityUpdates(affinity, old *corev1.NodeAffinity, path *field.Path) field.ErrorList {
	if old == nil || old.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	termsPath := path.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	oldTerms := old.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	var terms []corev1.NodeSelectorTerm
	if affinity != nil && affinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = affinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	if len(oldTerms) > 0 && len(oldTerms) != len(terms) {
		return field.ErrorList{field.Invalid(termsPath, registry.Internal(terms), "no additions/deletions to non-empty NodeSelectorTerms list are allowed")}
	}
	var errs field.ErrorList
	for i := range oldTerms {
		if !onlyAddedRequirements(terms[i], oldTerms[i]) {
			errs = append(errs, field.Invalid(termsPath.Index(i), registry.Internal(terms[i]), "only additions are allowed (no mutations or deletions)"))
		}
	}
	return errs
}

// onlyAddedRequirements is upstream's validateNodeSelectorTermHasOnlyAdditions.
func onlyAddedRequirements(term, old corev1.NodeSelectorTerm) bool {
	if len(old.MatchExpressions) == 0 && len(old.MatchFields) == 0 && (len(term.MatchExpressions) > 0 || len(term.MatchFields) > 0) {
		return false
	}
	kept := func(now, was []corev1.NodeSelectorRequirement) bool {
		return len(was) == 0 || len(now) >= len(was) && apiequality.Semantic.DeepEqual(now[:len(was)], was)
	}
	return kept(term.MatchExpressions, old.MatchExpressions) && kept(term.MatchFields, old.MatchFields)
}
