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
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateTolerations is upstream's ValidateTolerations with
// TaintTolerationComparisonOperators off (alpha in 1.37).
func ValidateTolerations(tolerations []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, strings.Join(msgs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists, corev1.TolerationOpLt, corev1.TolerationOpGt}))
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return errs
}
