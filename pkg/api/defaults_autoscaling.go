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
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// addAutoscalingDefaults registers the HorizontalPodAutoscaler defaults of
// autoscaling/v1 and autoscaling/v2, upstream's
// pkg/apis/autoscaling/v1/defaults.go and v2/defaults.go. v1's default CPU
// target is its conversion's (it needs the metrics annotation).
func addAutoscalingDefaults(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&autoscalingv1.HorizontalPodAutoscaler{}, func(obj any) {
		if hpa := obj.(*autoscalingv1.HorizontalPodAutoscaler); hpa.Spec.MinReplicas == nil {
			hpa.Spec.MinReplicas = ptr.To[int32](1)
		}
	})
	s.AddTypeDefaultingFunc(&autoscalingv2.HorizontalPodAutoscaler{}, func(obj any) { defaultHPA(obj.(*autoscalingv2.HorizontalPodAutoscaler)) })
}

// autoscalingDefaultedLists are the lists whose items addAutoscalingDefaults defaults.
var autoscalingDefaultedLists = []runtime.Object{&autoscalingv1.HorizontalPodAutoscalerList{}, &autoscalingv2.HorizontalPodAutoscalerList{}}

func defaultHPA(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	if hpa.Spec.MinReplicas == nil {
		hpa.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(hpa.Spec.Metrics) == 0 {
		hpa.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(HPADefaultCPUUtilization)}
	}
	// A behavior gets every rule it leaves out.
	if b := hpa.Spec.Behavior; b != nil {
		b.ScaleUp = withDefaultRules(b.ScaleUp, defaultHPAScaleUpRules())
		b.ScaleDown = withDefaultRules(b.ScaleDown, defaultHPAScaleDownRules())
	}
}

// defaultHPAScaleUpRules: no stabilization; at most 4 pods or double the
// pods every 15 seconds, whichever is more.
func defaultHPAScaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// defaultHPAScaleDownRules: all pods may go every 15 seconds; the
// stabilization window is left to the controller's flag.
func defaultHPAScaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
}

// withDefaultRules is upstream's copyHPAScalingRules: from's set fields over to.
func withDefaultRules(from, to *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return to
	}
	if from.SelectPolicy != nil {
		to.SelectPolicy = from.SelectPolicy
	}
	if from.StabilizationWindowSeconds != nil {
		to.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.Policies != nil {
		to.Policies = from.Policies
	}
	if from.Tolerance != nil {
		to.Tolerance = from.Tolerance
	}
	return to
}
