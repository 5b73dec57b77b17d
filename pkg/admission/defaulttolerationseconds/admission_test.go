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

package defaulttolerationseconds

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
)

// TestAdmit: upstream's cases (its TestForgivenessAdmission): the
// tolerations a pod lacks are added, with the seconds set; one it has,
// for either taint or for any key or effect, is left as it is.
func TestAdmit(t *testing.T) {
	notReady := func(s int64) corev1.Toleration {
		return corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(s)}
	}
	unreachable := func(s int64) corev1.Toleration {
		return corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(s)}
	}
	other := corev1.Toleration{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}
	for _, tt := range []struct {
		name        string
		tolerations []corev1.Toleration
		subresource string
		want        []corev1.Toleration
	}{
		{name: "none", want: []corev1.Toleration{notReady(300), unreachable(300)}},
		{name: "another taint's", tolerations: []corev1.Toleration{other}, want: []corev1.Toleration{other, notReady(300), unreachable(300)}},
		{name: "not-ready's", tolerations: []corev1.Toleration{notReady(700)}, want: []corev1.Toleration{notReady(700), unreachable(300)}},
		{name: "unreachable's", tolerations: []corev1.Toleration{unreachable(700)}, want: []corev1.Toleration{unreachable(700), notReady(300)}},
		{name: "any key", tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			want: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
		{name: "any effect", tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}},
			want: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists}, unreachable(300)}},
		{name: "NoSchedule only", tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			want: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, notReady(300), unreachable(300)}},
		{name: "a subresource", subresource: "status"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := New()
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tt.tolerations}}
			a := admission.NewAttributesRecord(pod, nil, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), tt.subresource, admission.Create, nil, false, nil)
			if err := p.Admit(t.Context(), a, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, pod.Spec.Tolerations); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
		})
	}
	p := New()
	p.SetDefaultTolerationSeconds(5, 7)
	pod := &corev1.Pod{}
	a := admission.NewAttributesRecord(pod, nil, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "ns", "p",
		corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Update, nil, false, nil)
	if err := p.Admit(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]corev1.Toleration{notReady(5), unreachable(7)}, pod.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations with seconds set (-want +got):\n%s", diff)
	}
}
