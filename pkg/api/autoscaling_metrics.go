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

// The conversions of an autoscaler's metrics and behavior between
// autoscaling/v2 and the v1 fields and annotations that carry them.

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

func metricSpecToV1(in *autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{Target: objectRefToV1(s.DescribedObject), MetricName: s.Metric.Name,
			Selector: s.Metric.Selector, AverageValue: s.Target.AverageValue}
		if s.Target.Value != nil {
			out.Object.TargetValue = *s.Target.Value
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			out.Pods.TargetAverageValue = *s.Target.AverageValue
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: s.Name,
			TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: s.Name, Container: s.Container,
			TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue}
	}
	return out
}

func metricSpecFromV1(in *autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		target := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &s.TargetValue, AverageValue: s.AverageValue}
		if s.AverageValue != nil {
			target.Type, target.Value = autoscalingv2.AverageValueMetricType, nil
			// v1 cannot leave the value out, and writes 0, which v2 would not take.
			if !s.TargetValue.IsZero() {
				target.Value = &s.TargetValue
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target),
			Target: target, Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector}}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &s.TargetAverageValue}}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: resourceTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: s.Name, Container: s.Container,
			Target: resourceTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.External; s != nil {
		targetType := autoscalingv2.ValueMetricType
		if s.TargetValue == nil {
			targetType = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Target: autoscalingv2.MetricTarget{Type: targetType, Value: s.TargetValue, AverageValue: s.TargetAverageValue}}
	}
	return out
}

func resourceTarget(utilization *int32, averageValue *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: utilization, AverageValue: averageValue}
	if utilization == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

func metricStatusToV1(in *autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{Target: objectRefToV1(s.DescribedObject), MetricName: s.Metric.Name,
			Selector: s.Metric.Selector, AverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			out.Object.CurrentValue = *s.Current.Value
		}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Current.AverageValue != nil {
			out.Pods.CurrentAverageValue = *s.Current.AverageValue
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			out.Resource.CurrentAverageValue = *s.Current.AverageValue
		}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			out.ContainerResource.CurrentAverageValue = *s.Current.AverageValue
		}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector,
			CurrentAverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			out.External.CurrentValue = *s.Current.Value
		}
	}
	return out
}

func metricStatusFromV1(in *autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: &s.CurrentValue, AverageValue: s.AverageValue},
			DescribedObject: autoscalingv2.CrossVersionObjectReference(s.Target)}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: &s.CurrentAverageValue}}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageValue: &s.CurrentAverageValue, AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{AverageValue: &s.CurrentAverageValue, AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: &s.CurrentValue, AverageValue: s.CurrentAverageValue}}
	}
	return out
}

// hpaBehaviorJSON and the types it holds are the shape of upstream's
// internal HorizontalPodAutoscalerBehavior, which its v1 conversion
// marshals into the behavior annotation: no json tags, so its keys are
// the Go field names ({"ScaleUp":{"StabilizationWindowSeconds":0,...}}).
type hpaBehaviorJSON struct {
	ScaleUp   *hpaScalingRulesJSON
	ScaleDown *hpaScalingRulesJSON
}

type hpaScalingRulesJSON struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []hpaScalingPolicyJSON
	Tolerance                  *resource.Quantity
}

type hpaScalingPolicyJSON struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToJSON(in *autoscalingv2.HorizontalPodAutoscalerBehavior) *hpaBehaviorJSON {
	rules := func(r *autoscalingv2.HPAScalingRules) *hpaScalingRulesJSON {
		if r == nil {
			return nil
		}
		out := &hpaScalingRulesJSON{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]hpaScalingPolicyJSON, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = hpaScalingPolicyJSON(p)
			}
		}
		return out
	}
	return &hpaBehaviorJSON{ScaleUp: rules(in.ScaleUp), ScaleDown: rules(in.ScaleDown)}
}

func behaviorFromJSON(in *hpaBehaviorJSON) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	rules := func(r *hpaScalingRulesJSON) *autoscalingv2.HPAScalingRules {
		if r == nil {
			return nil
		}
		out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = autoscalingv2.HPAScalingPolicy(p)
			}
		}
		return out
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(in.ScaleUp), ScaleDown: rules(in.ScaleDown)}
}
