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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestMergeLabelKeys: on create, the values of the pod's labels that
// matchLabelKeys and mismatchLabelKeys name join their selectors, as
// upstream merges them for the scheduler.
func TestMergeLabelKeys(t *testing.T) {
	p := modified(validPod(), func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": "web", "pod-template-hash": "abc"}
		selector := func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
		}
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: "zone", LabelSelector: selector(), MatchLabelKeys: []string{"pod-template-hash", "absent"}, MismatchLabelKeys: []string{"app"},
		}}}}
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: selector(), MatchLabelKeys: []string{"pod-template-hash"}}}
	})
	newPods(t).store.CreateStrategy.PrepareForCreate(context.Background(), p)
	want := []metav1.LabelSelectorRequirement{{Key: "pod-template-hash", Operator: metav1.LabelSelectorOpIn, Values: []string{"abc"}},
		{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web"}}}
	if diff := cmp.Diff(want, p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions); diff != "" {
		t.Errorf("the anti-affinity term's expressions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:1], p.Spec.TopologySpreadConstraints[0].LabelSelector.MatchExpressions); diff != "" {
		t.Errorf("the spread constraint's expressions (-want +got):\n%s", diff)
	}
}
