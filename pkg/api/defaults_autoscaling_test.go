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

package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

const hpaSpecJSON = `"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"maxReplicas":5`

func TestDecodeHPAV2Defaults(t *testing.T) {
	scaleUp := defaultHPAScaleUpRules()
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("1Gi")}}}
	tests := []struct {
		name         string
		spec         string
		wantMin      int32
		wantMetrics  []autoscalingv2.MetricSpec
		wantBehavior *autoscalingv2.HorizontalPodAutoscalerBehavior
	}{
		{name: "minReplicas 1 and 80% CPU", spec: hpaSpecJSON, wantMin: 1, wantMetrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
		{
			name:    "metrics and minReplicas kept",
			spec:    hpaSpecJSON + `,"minReplicas":3,"metrics":[{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}}]`,
			wantMin: 3, wantMetrics: []autoscalingv2.MetricSpec{memory},
		},
		{
			name:    "an empty behavior gets both directions' rules",
			spec:    hpaSpecJSON + `,"behavior":{}`,
			wantMin: 1, wantMetrics: []autoscalingv2.MetricSpec{cpuUtilization(80)},
			wantBehavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: scaleUp, ScaleDown: &autoscalingv2.HPAScalingRules{
				SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
				Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}},
		},
		{
			name:    "a partial rule keeps what it sets",
			spec:    hpaSpecJSON + `,"behavior":{"scaleDown":{"stabilizationWindowSeconds":60,"tolerance":"50m"},"scaleUp":{"selectPolicy":"Disabled","policies":[]}}`,
			wantMin: 1, wantMetrics: []autoscalingv2.MetricSpec{cpuUtilization(80)},
			wantBehavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect),
					Policies: []autoscalingv2.HPAScalingPolicy{}},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
					Policies:  []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
					Tolerance: quantity("50m")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeDefaulted(t, autoscalingv2.SchemeGroupVersion, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{`+tt.spec+`}}`)
			hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
			if got := ptr.Deref(hpa.Spec.MinReplicas, -1); got != tt.wantMin {
				t.Errorf("minReplicas: got %d, want %d", got, tt.wantMin)
			}
			if diff := cmp.Diff(tt.wantMetrics, hpa.Spec.Metrics); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantBehavior, hpa.Spec.Behavior); diff != "" {
				t.Errorf("behavior (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("list items", func(t *testing.T) {
		obj := decodeDefaulted(t, autoscalingv2.SchemeGroupVersion, `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscalerList","items":[{"metadata":{"name":"web"},"spec":{`+hpaSpecJSON+`}}]}`)
		if items := obj.(*autoscalingv2.HorizontalPodAutoscalerList).Items; len(items) != 1 || ptr.Deref(items[0].Spec.MinReplicas, -1) != 1 || len(items[0].Spec.Metrics) != 1 {
			t.Errorf("list items: got %+v, want one defaulted", items)
		}
	})
	t.Run("the defaults are not shared", func(t *testing.T) {
		a, b := &autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv2.HorizontalPodAutoscaler{}
		a.Spec.Behavior, b.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}, &autoscalingv2.HorizontalPodAutoscalerBehavior{}
		Scheme.Default(a)
		Scheme.Default(b)
		a.Spec.Behavior.ScaleUp.Policies[0].Value = 99
		*a.Spec.Behavior.ScaleDown.SelectPolicy = autoscalingv2.MinChangePolicySelect
		if diff := cmp.Diff(defaultHPAScaleUpRules(), b.Spec.Behavior.ScaleUp); diff != "" {
			t.Errorf("second object's scaleUp after changing the first's (-want +got):\n%s", diff)
		}
		if got := *b.Spec.Behavior.ScaleDown.SelectPolicy; got != autoscalingv2.MaxChangePolicySelect {
			t.Errorf("second object's scaleDown selectPolicy: got %q, want Max", got)
		}
	})
}

func TestDecodeHPAV1Defaults(t *testing.T) {
	data := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{` + hpaSpecJSON + `}}`
	v1 := decodeDefaulted(t, autoscalingv1.SchemeGroupVersion, data).(*autoscalingv1.HorizontalPodAutoscaler)
	if got := ptr.Deref(v1.Spec.MinReplicas, -1); got != 1 {
		t.Errorf("v1 minReplicas: got %d, want 1", got)
	}
	if v1.Spec.TargetCPUUtilizationPercentage != nil {
		t.Errorf("v1 targetCPUUtilizationPercentage: got %d, want none (the conversion's default)", *v1.Spec.TargetCPUUtilizationPercentage)
	}
	// Decoded to the hub, as the API handlers do: v1's defaults, then the conversion's CPU target.
	hub := decodeDefaulted(t, schema.GroupVersion{Group: autoscalingv1.GroupName, Version: runtime.APIVersionInternal}, data).(*autoscalingv2.HorizontalPodAutoscaler)
	if got := ptr.Deref(hub.Spec.MinReplicas, -1); got != 1 {
		t.Errorf("hub minReplicas: got %d, want 1", got)
	}
	if diff := cmp.Diff([]autoscalingv2.MetricSpec{cpuUtilization(80)}, hub.Spec.Metrics); diff != "" {
		t.Errorf("hub metrics (-want +got):\n%s", diff)
	}
}
