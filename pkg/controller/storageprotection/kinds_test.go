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

package storageprotection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// TestPodUses: upstream's podUsesPVCForDeletion. Only a scheduled pod
// uses a claim; an ephemeral volume's claim is the pod's only if the pod
// owns it, and only until the pod is shut down (deleted with no grace).
func TestPodUses(t *testing.T) {
	const uid = "pod-uid"
	pod := func(node string, shutDown bool, volumes ...corev1.VolumeSource) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: uid}, Spec: corev1.PodSpec{NodeName: node}}
		for i, v := range volumes {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: []string{"data", "scratch"}[i], VolumeSource: v})
		}
		if shutDown {
			p.DeletionTimestamp, p.DeletionGracePeriodSeconds = ptr.To(metav1.Now()), ptr.To[int64](0)
		}
		return p
	}
	claimed := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}
	ephemeralVolume := corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}
	named := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}}
	owned := func(owner types.UID) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "p-data",
			OwnerReferences: []metav1.OwnerReference{{UID: owner, Controller: ptr.To(true), Name: "p", Kind: "Pod", APIVersion: "v1"}}}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		pvc  *corev1.PersistentVolumeClaim
		want bool
	}{
		{"scheduled, by name", pod("n", false, claimed), named, true},
		{"not scheduled", pod("", false, claimed), named, false},
		{"shut down, by name", pod("n", true, claimed), named, true},
		{"another claim", pod("n", false, claimed), &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, false},
		{"ephemeral, owned", pod("n", false, ephemeralVolume), owned(uid), true},
		{"ephemeral, shut down", pod("n", true, ephemeralVolume), owned(uid), false},
		{"ephemeral, another owner", pod("n", false, ephemeralVolume), owned("other-uid"), false},
	} {
		if got := podUses(tc.pod, tc.pvc); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
