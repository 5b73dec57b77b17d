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

package horizontalpodautoscaler

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestValidate(t *testing.T) {
	selectPolicy := autoscalingv2.ScalingPolicySelect("Sometimes")
	tests := []registrytest.Change[*autoscalingv2.HorizontalPodAutoscaler]{
		{Name: "valid", Obj: validHPA(), Want: []string{}},
		{
			Name: "valid: every source, a behavior, a ReplicationController without a group",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: "ReplicationController", Name: "rc", APIVersion: "v1"}
				h.Spec.Metrics = []autoscalingv2.MetricSpec{
					cpu(50),
					{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceMemory, Container: "app",
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("1Gi")}}},
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("10")}}},
					{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
						DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s"}, Metric: autoscalingv2.MetricIdentifier{Name: "hits"},
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("1k")}}},
					external("queue", autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("30")}),
				}
				h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3600), SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect),
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 1800}}, Tolerance: quantity("0")},
				}
			}),
			Want: []string{},
		},
		{
			Name: "maxReplicas missing: the declarative Required error comes last",
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }),
			Want: []string{"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`", "spec.maxReplicas: Required value"},
		},
		{
			Name: "negative maxReplicas, no minReplicas",
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas, h.Spec.MaxReplicas = nil, -1 }),
			Want: []string{"spec.maxReplicas: Invalid value: -1: must be greater than or equal to 1"},
		},
		{
			Name: "minReplicas 0 needs an Object or External metric",
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](0) }),
			Want: []string{
				"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
			},
		},
		{
			Name: "maxReplicas below minReplicas",
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](6) }),
			Want: []string{"spec.maxReplicas: Invalid value: 5: must be greater than or equal to `minReplicas`"},
		},
		{
			Name: "scaleTargetRef",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Name: "a/b", APIVersion: "v1"}
			}),
			Want: []string{
				"spec.scaleTargetRef.kind: Required value",
				`spec.scaleTargetRef.name: Invalid value: "a/b": may not contain '/'`,
				`spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group`,
			},
		},
		{
			Name: "scaleTargetRef apiVersion that does not parse",
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "apps/v1/x" }),
			Want: []string{`spec.scaleTargetRef.apiVersion: Invalid value: "apps/v1/x": unexpected GroupVersion string: apps/v1/x`},
		},
		{
			Name: "no metric source type",
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.Metrics = []autoscalingv2.MetricSpec{{}} }),
			Want: []string{
				"spec.metrics[0].type: Required value: must specify a metric source type",
				`spec.metrics[0].type: Unsupported value: "": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
				`spec.metrics[0].type: Unsupported value: "": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
			},
		},
		{
			Name: "the type's source missing, two others set",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Resource: cpu(80).Resource,
					External: external("", autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("1")}).External}}
			}),
			Want: []string{
				"spec.metrics[0].external.metric.name: Required value: must specify a metric name",
				"spec.metrics[0].pods: Required value: must populate information for the given metric source",
				"spec.metrics[0].external: Forbidden: must populate the given metric source only",
				"spec.metrics[0].resource: Forbidden: must populate the given metric source only",
			},
		},
		{
			Name: "resource targets",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Metrics = []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: "Percent", AverageUtilization: ptr.To[int32](0), AverageValue: quantity("100m")}}},
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{}},
				}
			}),
			Want: []string{
				`spec.metrics[0].resource.target.type: Invalid value: "Percent": must be either Utilization, Value, or AverageValue`,
				"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
				"spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
				"spec.metrics[1].resource.name: Required value: must specify a resource name",
				"spec.metrics[1].resource.target.type: Required value: must specify a metric target type",
				`spec.metrics[1].resource.target.type: Invalid value: "": must be either Utilization, Value, or AverageValue`,
				"spec.metrics[1].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
			},
		},
		{
			Name: "container resource",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: "gpu", Container: "App_1", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}}
			}),
			Want: []string{
				`spec.metrics[0].containerResource.name: Invalid value: "gpu": must be a standard resource type or fully qualified`,
				`spec.metrics[0].containerResource.name: Invalid value: "gpu": must be a standard resource for containers`,
				`spec.metrics[0].containerResource.container: Invalid value: "App_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			},
		},
		{
			Name: "pods, object and external targets",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Metrics = []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: ".."},
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("-1")}}},
					{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
						DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s", APIVersion: "a/b/c"},
						Metric:          autoscalingv2.MetricIdentifier{Name: "hits"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}}},
					external("queue", autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("1"), AverageValue: quantity("1")}),
				}
			}),
			Want: []string{
				`spec.metrics[0].pods.metric.name: Invalid value: "..": may not be '..'`,
				"spec.metrics[0].pods.target.value: Invalid value: \"-1\": must be positive",
				"spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue",
				`spec.metrics[1].object.describedObject.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
				"spec.metrics[1].object.target.averageValue: Required value: must set either a target value or averageValue",
				"spec.metrics[2].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target",
			},
		},
		{
			Name: "behavior",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](-1), SelectPolicy: &selectPolicy},
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3601), Tolerance: quantity("-1"),
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Seconds", PeriodSeconds: 1801}}},
				}
			}),
			Want: []string{
				"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
				`spec.behavior.scaleUp.selectPolicy: Unsupported value: "Sometimes": supported values: "Disabled", "Max", "Min"`,
				"spec.behavior.scaleUp.policies: Required value: must specify at least one Policy",
				"spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
				`spec.behavior.scaleDown.policies[0].type: Unsupported value: "Seconds": supported values: "Percent", "Pods"`,
				"spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
				"spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
				`spec.behavior.scaleDown.tolerance: Invalid value: "-1": must be greater than or equal to 0`,
			},
		},
		{
			Name: "metadata and spec",
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Name, h.Spec.MaxReplicas = "Web", -2
			}),
			Want: []string{
				`metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				"spec.maxReplicas: Invalid value: -2: must be greater than or equal to `minReplicas`",
				"spec.maxReplicas: Invalid value: -2: must be greater than or equal to 1",
			},
		},
	}
	store := registrytest.REST(t, NewStorage, "horizontalpodautoscalers")
	registrytest.ValidateChanges(t, store.CreateStrategy, registrytest.Messages, tests)
}

func TestValidateUpdate(t *testing.T) {
	tests := []registrytest.Change[*autoscalingv2.HorizontalPodAutoscaler]{
		{Name: "valid", Old: validHPA(), Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 9 }), Want: []string{}},
		{
			Name: "changed to an invalid maxReplicas: the declarative error, last",
			Old:  validHPA(),
			Obj:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }),
			Want: []string{"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`", "spec.maxReplicas: Required value"},
		},
		{
			Name: "an unchanged invalid maxReplicas: the handwritten error, in place",
			Old:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }),
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.MaxReplicas = 0
				h.Labels = map[string]string{"a": "b"}
			}),
			Want: []string{"spec.maxReplicas: Required value: must be set and greater than 0", "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"},
		},
		{
			Name: "an unchanged scaleTargetRef kind and apiVersion are not checked again",
			Old:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "v1" }),
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.ScaleTargetRef.APIVersion, h.Spec.ScaleTargetRef.Name = "v1", "other"
			}),
			Want: []string{},
		},
		{
			Name: "a changed kind checks the apiVersion",
			Old:  registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "v1" }),
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.ScaleTargetRef.APIVersion, h.Spec.ScaleTargetRef.Kind = "v1", "StatefulSet"
			}),
			Want: []string{`spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group`},
		},
		{
			Name: "minReplicas 0 stays allowed once stored",
			Old: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.MinReplicas = ptr.To[int32](0)
				h.Spec.Metrics = []autoscalingv2.MetricSpec{external("queue", autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("5")})}
			}),
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.MinReplicas = ptr.To[int32](0)
				h.Spec.Metrics = []autoscalingv2.MetricSpec{external("queue", autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("6")})}
			}),
			Want: []string{},
		},
		{
			Name: "object metrics with an invalid apiVersion stay allowed once stored",
			Old: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s", APIVersion: "a/b/c"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "hits"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("1")}}}}
			}),
			Obj: registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s", APIVersion: "x/y/z"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "hits"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("2")}}}}
			}),
			Want: []string{},
		},
	}
	store := registrytest.REST(t, NewStorage, "horizontalpodautoscalers")
	registrytest.ValidateUpdateChanges(t, store.UpdateStrategy, registrytest.Messages, tests)
}
