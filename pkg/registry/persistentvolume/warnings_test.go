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
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

// TestWarnings: as kube-apiserver 1.37, of deprecated annotations, the
// Recycle policy, deprecated node labels and volume plugins.
func TestWarnings(t *testing.T) {
	pv := registrytest.Modified(validPV(), func(pv *corev1.PersistentVolume) {
		pv.Annotations = map[string]string{"volume.beta.kubernetes.io/mount-options": "ro"}
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRecycle
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "beta.kubernetes.io/os", Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}},
		}}}}
		pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{RBD: &corev1.RBDPersistentVolumeSource{}}
	})
	want := []string{
		`metadata.annotations[volume.beta.kubernetes.io/mount-options]: deprecated since v1.31; use "mountOptions" attribute instead`,
		"spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
		`spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
		"spec.rbd: deprecated in v1.28, non-functional in v1.31+",
	}
	registrytest.CheckWarnings(t, registrytest.REST(t, NewStorage, "persistentvolumes"), []registrytest.WarningCase{
		{Name: "create", Obj: pv, Want: want},
		{Name: "update", Obj: pv, Old: pv, Want: want},
		{Name: "none", Obj: validPV()},
	})
}
