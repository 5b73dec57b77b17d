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
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
)

// NewStorage returns the storage of horizontalpodautoscalers and
// horizontalpodautoscalers/status, whose objects are autoscaling/v2's (the
// hub; autoscaling/v1 serves the same storage, converted). As
// kube-apiserver 1.37's default gates have it: HPAGeneration (beta, on)
// counts spec changes in metadata.generation, HPAScaleToZero (beta, on)
// lets minReplicas be 0, and HPAConfigurableTolerance (GA) keeps
// the behavior's tolerance.
func NewStorage(optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	base := registry.NewStrategy(true)
	base.ValidateFields = func(obj runtime.Object) field.ErrorList {
		return validateSpec(obj.(*autoscalingv2.HorizontalPodAutoscaler), nil)
	}
	base.ValidateFieldsUpdate = func(obj, old runtime.Object) field.ErrorList {
		return validateSpec(obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler))
	}
	base.OnCreate = func(obj runtime.Object) { dropRoundTripAnnotations(obj) }
	base.OnUpdate = func(obj, _ runtime.Object) { dropRoundTripAnnotations(obj) }
	main, status := registry.SpecAndStatus{GroupVersion: "autoscaling/v2", Generation: true}.Strategies(base)
	main.ResetFields = resetFields("status")
	status.ResetFields = resetFields("spec")
	keepSpec := status.OnUpdate
	status.OnUpdate = func(obj, old runtime.Object) {
		keepSpec(obj, old)
		dropRoundTripAnnotations(obj)
	}
	status.ValidateFieldsUpdate = func(obj, _ runtime.Object) field.ErrorList {
		return validateStatus(&obj.(*autoscalingv2.HorizontalPodAutoscaler).Status)
	}
	store, err := registry.NewREST(optsGetter, registry.Resource{
		Resource:   autoscalingv2.Resource("horizontalpodautoscalers"),
		Singular:   "horizontalpodautoscaler",
		ShortNames: []string{"hpa"},
		Categories: []string{"all"},
		New:        func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
		NewList:    func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
		Strategy:   main,
		Table:      table,
	})
	if err != nil {
		return nil, err
	}
	return map[string]rest.Storage{
		"horizontalpodautoscalers":        store,
		"horizontalpodautoscalers/status": registry.NewStatusREST(store, status),
	}, nil
}

// resetFields are the fields of both served versions that an endpoint
// resets (upstream's GetResetFields).
func resetFields(path string) map[fieldpath.APIVersion]*fieldpath.Set {
	fields := registry.Fieldpaths(autoscalingv1.SchemeGroupVersion.String(), path)
	for v, set := range registry.Fieldpaths(autoscalingv2.SchemeGroupVersion.String(), path) {
		fields[v] = set
	}
	return fields
}

// dropRoundTripAnnotations drops the annotations in which autoscaling/v1
// keeps v2's fields: upstream's v2 conversion drops them from whatever is
// written (and its v1 conversion from what v1 writes, as ours does).
func dropRoundTripAnnotations(obj runtime.Object) {
	hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	hpa.Annotations = api.DropHPARoundTripAnnotations(hpa.Annotations)
}

var (
	specDescriptions   = autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
	statusDescriptions = autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()
)

var table = registry.Table{
	Columns: []metav1.TableColumnDefinition{
		registry.NameColumn,
		{Name: "Reference", Type: "string", Description: specDescriptions["scaleTargetRef"]},
		{Name: "Targets", Type: "string", Description: specDescriptions["metrics"]},
		{Name: "MinPods", Type: "string", Description: specDescriptions["minReplicas"]},
		{Name: "MaxPods", Type: "string", Description: specDescriptions["maxReplicas"]},
		{Name: "Replicas", Type: "string", Description: statusDescriptions["currentReplicas"]},
		registry.AgeColumn,
	},
	Cells: func(obj runtime.Object) []any {
		hpa := obj.(*autoscalingv2.HorizontalPodAutoscaler)
		minPods := "<unset>"
		if hpa.Spec.MinReplicas != nil {
			minPods = fmt.Sprintf("%d", *hpa.Spec.MinReplicas)
		}
		return []any{hpa.Name, hpa.Spec.ScaleTargetRef.Kind + "/" + hpa.Spec.ScaleTargetRef.Name,
			formatMetrics(hpa.Spec.Metrics, hpa.Status.CurrentMetrics), minPods,
			int64(hpa.Spec.MaxReplicas), int64(hpa.Status.CurrentReplicas), registry.Age(hpa.CreationTimestamp)}
	},
}

// formatMetrics is upstream's formatHPAMetrics: "current/target" of the
// first two metrics (at the same index in status), and how many more. A
// metric whose source is missing (which validation rules out) prints as
// one of an unknown type.
func formatMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const max = 2
	var list []string
	for i, spec := range specs {
		var status *autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = &statuses[i]
		}
		list = append(list, formatMetric(spec, status))
	}
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ", "), len(list)-max)
	}
	return strings.Join(list, ", ")
}

func formatMetric(spec autoscalingv2.MetricSpec, status *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	utilization := func(target *int32, current *autoscalingv2.MetricValueStatus) (string, string) {
		c, t := unknown, "<auto>"
		if current != nil && current.AverageUtilization != nil {
			c = fmt.Sprintf("%d%%", *current.AverageUtilization)
		}
		if target != nil {
			t = fmt.Sprintf("%d%%", *target)
		}
		return c, t
	}
	switch {
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		current := unknown
		if spec.External.Target.AverageValue != nil {
			if status != nil && status.External != nil && status.External.Current.AverageValue != nil {
				current = status.External.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.External.Target.AverageValue.String())
		}
		if status != nil && status.External != nil {
			current = status.External.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.External.Target.Value.String())
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		current := unknown
		if status != nil && status.Pods != nil {
			current = status.Pods.Current.AverageValue.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.Pods.Target.AverageValue.String())
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		current := unknown
		if spec.Object.Target.AverageValue != nil {
			if status != nil && status.Object != nil && status.Object.Current.AverageValue != nil {
				current = status.Object.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, spec.Object.Target.AverageValue.String())
		}
		if status != nil && status.Object != nil {
			current = status.Object.Current.Value.String()
		}
		return fmt.Sprintf("%s/%s", current, spec.Object.Target.Value.String())
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		if spec.Resource.Target.AverageValue != nil {
			current := unknown
			if status != nil && status.Resource != nil {
				current = status.Resource.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, spec.Resource.Target.AverageValue.String())
		}
		var value *autoscalingv2.MetricValueStatus
		if status != nil && status.Resource != nil {
			value = &status.Resource.Current
		}
		current, target := utilization(spec.Resource.Target.AverageUtilization, value)
		return fmt.Sprintf("%s: %s/%s", spec.Resource.Name, current, target)
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		if spec.ContainerResource.Target.AverageValue != nil {
			current := unknown
			if status != nil && status.ContainerResource != nil {
				current = status.ContainerResource.Current.AverageValue.String()
			}
			return fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name, current, spec.ContainerResource.Target.AverageValue.String())
		}
		var value *autoscalingv2.MetricValueStatus
		if status != nil && status.ContainerResource != nil {
			value = &status.ContainerResource.Current
		}
		current, target := utilization(spec.ContainerResource.Target.AverageUtilization, value)
		return fmt.Sprintf("%s: %s/%s", spec.ContainerResource.Name, current, target)
	}
	return "<unknown type>"
}
