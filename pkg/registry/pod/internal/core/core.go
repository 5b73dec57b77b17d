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

// Package core holds, untagged, the fields of k8s.io/kubernetes' internal
// core.Toleration, so that decoding a pod's tolerations annotation into
// it fails with the words upstream's decoding does.
package core

import corev1 "k8s.io/api/core/v1"

// Toleration is upstream's internal core.Toleration.
type Toleration struct {
	Key               string
	Operator          TolerationOperator
	Value             string
	Effect            TaintEffect
	TolerationSeconds *int64
}

// TolerationOperator is upstream's internal core.TolerationOperator.
type TolerationOperator string

// TaintEffect is upstream's internal core.TaintEffect.
type TaintEffect string

// V1 is t as a v1 toleration.
func (t Toleration) V1() corev1.Toleration {
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value,
		Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds}
}
