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
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The annotations in which autoscaling/v1 HorizontalPodAutoscalers keep
// what only autoscaling/v2 can say, upstream's (pkg/apis/autoscaling/annotations.go).
const (
	HPAMetricSpecsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	HPAMetricStatusesAnnotation     = "autoscaling.alpha.kubernetes.io/current-metrics"
	HPAConditionsAnnotation         = "autoscaling.alpha.kubernetes.io/conditions"
	HPABehaviorSpecsAnnotation      = "autoscaling.alpha.kubernetes.io/behavior"
	HPAToleranceScaleDownAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	HPAToleranceScaleUpAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"

	// HPADefaultCPUUtilization is the CPU utilization target of an
	// autoscaler that names no metric.
	HPADefaultCPUUtilization = 80
)

var hpaRoundTripAnnotations = []string{
	HPAMetricSpecsAnnotation, HPABehaviorSpecsAnnotation, HPAToleranceScaleDownAnnotation,
	HPAToleranceScaleUpAnnotation, HPAMetricStatusesAnnotation, HPAConditionsAnnotation,
}

// DropHPARoundTripAnnotations returns in without the round-trip
// annotations: in itself if it has none, else a copy (upstream's
// DropRoundTripHorizontalPodAutoscalerAnnotations).
func DropHPARoundTripAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for _, k := range hpaRoundTripAnnotations {
		if _, ok := in[k]; ok {
			if out == nil {
				out = make(map[string]string, len(in))
				for k, v := range in {
					out[k] = v
				}
			}
			delete(out, k)
		}
	}
	if out == nil {
		return in
	}
	return out
}

// addAutoscalingConversions converts autoscaling/v1 HorizontalPodAutoscalers
// to and from autoscaling/v2 ones, their hub and storage form, as upstream's
// pkg/apis/autoscaling/v1/conversion.go does: v1 has a CPU utilization
// target only, and keeps the other metrics, the behavior, the current
// metrics and the conditions in annotations.
func addAutoscalingConversions(s *runtime.Scheme) error {
	for _, c := range []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil), func(a, b any, _ conversion.Scope) error {
			return hpaFromV1(a.(*autoscalingv1.HorizontalPodAutoscaler), b.(*autoscalingv2.HorizontalPodAutoscaler))
		}},
		{(*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil), func(a, b any, _ conversion.Scope) error {
			return hpaToV1(a.(*autoscalingv2.HorizontalPodAutoscaler), b.(*autoscalingv1.HorizontalPodAutoscaler))
		}},
		{(*autoscalingv1.HorizontalPodAutoscalerList)(nil), (*autoscalingv2.HorizontalPodAutoscalerList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*autoscalingv1.HorizontalPodAutoscalerList), b.(*autoscalingv2.HorizontalPodAutoscalerList)
			out.ListMeta = in.ListMeta
			out.Items = nil
			if in.Items != nil {
				out.Items = make([]autoscalingv2.HorizontalPodAutoscaler, len(in.Items))
			}
			for i := range in.Items {
				if err := hpaFromV1(&in.Items[i], &out.Items[i]); err != nil {
					return err
				}
			}
			return nil
		}},
		{(*autoscalingv2.HorizontalPodAutoscalerList)(nil), (*autoscalingv1.HorizontalPodAutoscalerList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*autoscalingv2.HorizontalPodAutoscalerList), b.(*autoscalingv1.HorizontalPodAutoscalerList)
			out.ListMeta = in.ListMeta
			out.Items = nil
			if in.Items != nil {
				out.Items = make([]autoscalingv1.HorizontalPodAutoscaler, len(in.Items))
			}
			for i := range in.Items {
				if err := hpaToV1(&in.Items[i], &out.Items[i]); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		if err := s.AddConversionFunc(c.a, c.b, c.fn); err != nil {
			return err
		}
	}
	return nil
}

// isCPUUtilization is a metric v1's targetCPUUtilizationPercentage says.
func isCPUUtilization(m *autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// hpaToV1 is upstream's Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler.
func hpaToV1(in *autoscalingv2.HorizontalPodAutoscaler, out *autoscalingv1.HorizontalPodAutoscaler) error {
	in = in.DeepCopy() // out may keep in's pointers
	*out = autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas,
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			LastScaleTime:      in.Status.LastScaleTime,
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	// Only the annotations this conversion makes.
	out.Annotations = DropHPARoundTripAnnotations(out.Annotations)

	otherMetrics := make([]autoscalingv1.MetricSpec, 0, len(in.Spec.Metrics))
	for i := range in.Spec.Metrics {
		m := &in.Spec.Metrics[i]
		if isCPUUtilization(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = m.Resource.Target.AverageUtilization
			}
			continue
		}
		otherMetrics = append(otherMetrics, metricSpecToV1(m))
	}
	currentMetrics := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
	for i := range in.Status.CurrentMetrics {
		m := &in.Status.CurrentMetrics[i]
		// The raw value is kept too (in the annotation).
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = ptr.To(*m.Resource.Current.AverageUtilization)
		}
		currentMetrics[i] = metricStatusToV1(m)
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
	for i, c := range in.Status.Conditions {
		conditions[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
			Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
			Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
		}
	}

	annotate := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(b)
		return nil
	}
	if len(otherMetrics) > 0 {
		if err := annotate(HPAMetricSpecsAnnotation, otherMetrics); err != nil {
			return err
		}
	}
	if len(in.Status.CurrentMetrics) > 0 {
		if err := annotate(HPAMetricStatusesAnnotation, currentMetrics); err != nil {
			return err
		}
	}
	if in.Spec.Behavior != nil {
		if err := annotate(HPABehaviorSpecsAnnotation, behaviorToJSON(in.Spec.Behavior)); err != nil {
			return err
		}
	}
	if len(in.Status.Conditions) > 0 {
		if err := annotate(HPAConditionsAnnotation, conditions); err != nil {
			return err
		}
	}
	return nil
}

// hpaFromV1 is upstream's Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler:
// annotations that do not parse are ignored, and dropped.
func hpaFromV1(in *autoscalingv1.HorizontalPodAutoscaler, out *autoscalingv2.HorizontalPodAutoscaler) error {
	in = in.DeepCopy() // out may keep in's pointers
	*out = autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas,
			MaxReplicas:    in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			LastScaleTime:      in.Status.LastScaleTime,
			CurrentReplicas:    in.Status.CurrentReplicas,
			DesiredReplicas:    in.Status.DesiredReplicas,
		},
	}
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(*in.Spec.TargetCPUUtilizationPercentage)}
	}
	if in.Status.CurrentCPUUtilizationPercentage != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: in.Status.CurrentCPUUtilizationPercentage}},
		}}
	}

	if enc, ok := out.Annotations[HPAMetricSpecsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &other); err == nil {
			// The CPU target, if any, comes after the others.
			metrics := make([]autoscalingv2.MetricSpec, len(other)+len(out.Spec.Metrics))
			for i := range other {
				metrics[i] = metricSpecFromV1(&other[i])
			}
			if out.Spec.Metrics != nil {
				metrics[len(other)] = out.Spec.Metrics[0]
			}
			out.Spec.Metrics = metrics
		}
	}
	if enc, ok := out.Annotations[HPABehaviorSpecsAnnotation]; ok {
		var behavior hpaBehaviorJSON
		if err := json.Unmarshal([]byte(enc), &behavior); err == nil && behavior != (hpaBehaviorJSON{}) {
			out.Spec.Behavior = behaviorFromJSON(&behavior)
		}
	}
	if enc, ok := out.Annotations[HPAMetricStatusesAnnotation]; ok {
		// These say more than currentCPUUtilizationPercentage.
		var current []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &current); err == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
			for i := range current {
				out.Status.CurrentMetrics[i] = metricStatusFromV1(&current[i])
			}
		}
	}
	// v1's implicit default, applied here where all the metrics are known.
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(HPADefaultCPUUtilization)}
	}
	if enc, ok := out.Annotations[HPAConditionsAnnotation]; ok {
		var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
		if err := json.Unmarshal([]byte(enc), &conditions); err == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conditions))
			for i, c := range conditions {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
					Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
				}
			}
		}
	}
	out.Annotations = DropHPARoundTripAnnotations(out.Annotations)
	return nil
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)}},
	}
}

func objectRefToV1(r autoscalingv2.CrossVersionObjectReference) autoscalingv1.CrossVersionObjectReference {
	return autoscalingv1.CrossVersionObjectReference(r)
}
