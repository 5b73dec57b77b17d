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
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestDropDisabledFields: fields behind kube-apiserver 1.37's alpha gates
// are dropped from a new pod, as upstream's strategy drops them before
// validating, and kept on an update of a pod that has them.
func TestDropDisabledFields(t *testing.T) {
	withAlphaFields := modified(validPod(), func(p *corev1.Pod) {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.SIGTERM)}
		p.Spec.Containers[1].Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.SIGINT), PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}
		p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 1, Mode: ptr.To(corev1.GRPCProbeModeTLS)}}}
		p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Mode: ptr.To[int32](0o700)}}},
			{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{DefaultUser: ptr.To[int64](1000),
				Items: []corev1.KeyToPath{{Key: "k", Path: "p", User: ptr.To[int64](1000)}}}}}}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/s", BindMountOptions: []string{"nosuid"}}}
	})
	created := withAlphaFields.DeepCopy()
	newPods(t).store.CreateStrategy.PrepareForCreate(context.Background(), created)
	spec := created.Spec
	if spec.Containers[0].Lifecycle != nil || spec.Containers[1].Lifecycle.StopSignal != nil || spec.Containers[1].Lifecycle.PreStop == nil {
		t.Errorf("created: lifecycles %+v, %+v, want the stop signals dropped (the first lifecycle with it), the hook kept", spec.Containers[0].Lifecycle, spec.Containers[1].Lifecycle)
	}
	if spec.Containers[0].LivenessProbe.GRPC.Mode != nil || spec.Volumes[0].EmptyDir.Mode != nil || spec.Containers[0].VolumeMounts[0].BindMountOptions != nil {
		t.Errorf("created: the gRPC probe's mode, the emptyDir's mode or the bind mount options kept")
	}
	if c := spec.Volumes[1].ConfigMap; c.DefaultUser != nil || c.Items[0].User != nil {
		t.Errorf("created: the volume's user fields kept")
	}

	updated := withAlphaFields.DeepCopy()
	newPods(t).store.UpdateStrategy.PrepareForUpdate(context.Background(), updated, withAlphaFields.DeepCopy())
	if updated.Spec.Containers[0].Lifecycle == nil || updated.Spec.Volumes[0].EmptyDir.Mode == nil || updated.Spec.Volumes[1].ConfigMap.DefaultUser == nil {
		t.Errorf("updated: fields the stored pod has dropped, want them kept")
	}
}
