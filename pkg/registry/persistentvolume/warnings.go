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

package persistentvolume

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/api/node"
)

// deprecatedVolumes are the volume plugins upstream warns of, in its
// order. A volume has one plugin, so one at most applies.
var deprecatedVolumes = []struct {
	field, message string
	set            func(s *corev1.PersistentVolumeSpec) bool
}{
	{"cephfs", "deprecated in v1.28, non-functional in v1.31+", func(s *corev1.PersistentVolumeSpec) bool { return s.CephFS != nil }},
	{"photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+", func(s *corev1.PersistentVolumeSpec) bool { return s.PhotonPersistentDisk != nil }},
	{"scaleIO", "deprecated in v1.16, non-functional in v1.22+", func(s *corev1.PersistentVolumeSpec) bool { return s.ScaleIO != nil }},
	{"storageOS", "deprecated in v1.22, non-functional in v1.25+", func(s *corev1.PersistentVolumeSpec) bool { return s.StorageOS != nil }},
	{"glusterfs", "deprecated in v1.25, non-functional in v1.26+", func(s *corev1.PersistentVolumeSpec) bool { return s.Glusterfs != nil }},
	{"rbd", "deprecated in v1.28, non-functional in v1.31+", func(s *corev1.PersistentVolumeSpec) bool { return s.RBD != nil }},
}

// warnings are kube-apiserver's of a volume's create and update: deprecated
// annotations, the Recycle policy, deprecated node labels in its affinity,
// deprecated volume plugins.
func warnings(obj, _ runtime.Object) []string {
	pv := obj.(*corev1.PersistentVolume)
	var warnings []string
	for _, d := range []struct{ key, message string }{
		{`volume.beta.kubernetes.io/storage-class`, `deprecated since v1.8; use "storageClassName" attribute instead`},
		{`volume.beta.kubernetes.io/mount-options`, `deprecated since v1.31; use "mountOptions" attribute instead`},
	} {
		if _, ok := pv.Annotations[d.key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s", field.NewPath("metadata", "annotations").Key(d.key), d.message))
		}
	}
	spec := field.NewPath("spec")
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		warnings = append(warnings, fmt.Sprintf("%s: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.", spec.Child("persistentVolumeReclaimPolicy")))
	}
	if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
		terms := spec.Child("nodeAffinity", "required", "nodeSelectorTerms")
		for i, term := range a.Required.NodeSelectorTerms {
			warnings = append(warnings, node.SelectorTermWarnings(term, false, terms.Index(i))...)
		}
	}
	for _, d := range deprecatedVolumes {
		if d.set(&pv.Spec) {
			warnings = append(warnings, fmt.Sprintf("%s: %s", spec.Child(d.field), d.message))
		}
	}
	return warnings
}
