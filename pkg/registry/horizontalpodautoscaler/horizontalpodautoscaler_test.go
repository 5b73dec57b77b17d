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
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func quantity(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

func cpu(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)}}}
}

func external(name string, target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: name}, Target: target}}
}

func validHPA() *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1", ResourceVersion: "1"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    5,
			Metrics:        []autoscalingv2.MetricSpec{cpu(80)},
		},
	}
}

func TestStorage(t *testing.T) {
	storages := registrytest.Storages(t, NewStorage, "horizontalpodautoscalers", "horizontalpodautoscalers", "horizontalpodautoscalers/status")
	status, ok := storages["horizontalpodautoscalers/status"].(*registry.StatusREST)
	if !ok {
		t.Fatalf("status storage: got %T, want *registry.StatusREST", storages["horizontalpodautoscalers/status"])
	}
	store := registrytest.REST(t, NewStorage, "horizontalpodautoscalers")
	registrytest.CheckShape(t, store, registrytest.Shape{Resource: autoscalingv2.Resource("horizontalpodautoscalers"),
		Singular: "horizontalpodautoscaler", Namespaced: true, ShortNames: []string{"hpa"}})
	if diff := cmp.Diff([]string{"all"}, store.Categories()); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	// Both versions, as upstream's GetResetFields.
	equal := cmp.Comparer(func(a, b *fieldpath.Set) bool { return a.Equals(b) })
	both := func(path string) map[fieldpath.APIVersion]*fieldpath.Set {
		set := fieldpath.NewSet(fieldpath.MakePathOrDie(path))
		return map[fieldpath.APIVersion]*fieldpath.Set{"autoscaling/v1": set, "autoscaling/v2": set}
	}
	if diff := cmp.Diff(both("status"), store.GetResetFields(), equal); diff != "" {
		t.Errorf("reset fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(both("spec"), status.GetResetFields(), equal); diff != "" {
		t.Errorf("status reset fields (-want +got):\n%s", diff)
	}
}

func TestPrepareForCreate(t *testing.T) {
	hpa := registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Generation = 7
		h.Annotations = map[string]string{api.HPAMetricSpecsAnnotation: "[]", api.HPABehaviorSpecsAnnotation: "{}", "keep": "me"}
		h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4}
	})
	registrytest.REST(t, NewStorage, "horizontalpodautoscalers").CreateStrategy.PrepareForCreate(context.Background(), hpa)
	if diff := cmp.Diff(autoscalingv2.HorizontalPodAutoscalerStatus{}, hpa.Status); diff != "" {
		t.Errorf("status after PrepareForCreate (-want +got):\n%s", diff)
	}
	if hpa.Generation != 1 {
		t.Errorf("generation after PrepareForCreate: got %d, want 1", hpa.Generation)
	}
	if diff := cmp.Diff(map[string]string{"keep": "me"}, hpa.Annotations); diff != "" {
		t.Errorf("annotations after PrepareForCreate (-want +got):\n%s", diff)
	}
}

func TestPrepareForUpdate(t *testing.T) {
	old := registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
		h.Generation = 2
		h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 1, DesiredReplicas: 1}
	})
	tests := []struct {
		name           string
		mutate         func(*autoscalingv2.HorizontalPodAutoscaler)
		wantGeneration int64
	}{
		{name: "labels", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Labels = map[string]string{"a": "b"} }, wantGeneration: 2},
		{name: "status", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Status.DesiredReplicas = 9 }, wantGeneration: 2},
		{name: "spec", mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 7 }, wantGeneration: 3},
		{
			name: "behavior",
			mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: quantity("50m")}}
			},
			wantGeneration: 3,
		},
	}
	strategy := registrytest.REST(t, NewStorage, "horizontalpodautoscalers").UpdateStrategy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := registrytest.Modified(old, tt.mutate)
			want := obj.DeepCopy()
			strategy.PrepareForUpdate(context.Background(), obj, old)
			if obj.Generation != tt.wantGeneration {
				t.Errorf("generation: got %d, want %d", obj.Generation, tt.wantGeneration)
			}
			if diff := cmp.Diff(old.Status, obj.Status); diff != "" {
				t.Errorf("status after PrepareForUpdate (-want +got):\n%s", diff)
			}
			// The spec is kept as sent (tolerance too: HPAConfigurableTolerance is GA).
			if diff := cmp.Diff(want.Spec, obj.Spec); diff != "" {
				t.Errorf("spec after PrepareForUpdate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateThroughStores runs updates through the generic stores of
// horizontalpodautoscalers and of horizontalpodautoscalers/status.
func TestUpdateThroughStores(t *testing.T) {
	newStatus := autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4, ObservedGeneration: ptr.To[int64](1),
		CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](90)}}}}}
	tests := []struct {
		name           string
		status         bool
		newStatus      autoscalingv2.HorizontalPodAutoscalerStatus
		wantMax        int32
		wantGeneration int64
		wantStatus     autoscalingv2.HorizontalPodAutoscalerStatus
		wantInvalid    []string
	}{
		{name: "main: spec changes, status kept", newStatus: newStatus, wantMax: 7, wantGeneration: 2},
		{name: "status: status changes, spec kept", status: true, newStatus: newStatus, wantMax: 5, wantGeneration: 1, wantStatus: newStatus},
		{
			name: "status: negative counts are invalid", status: true,
			newStatus: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: -1, DesiredReplicas: -2,
				Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, ObservedGeneration: ptr.To[int64](-1)}}},
			wantInvalid: []string{"status.conditions[0].observedGeneration: FieldValueInvalid", "status.currentReplicas: FieldValueInvalid", "status.desiredReplicas: FieldValueInvalid"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := registrytest.UpdateSeeded(t, NewStorage, "horizontalpodautoscalers", tt.status, registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Generation = 1 }), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.MaxReplicas = 7
				h.Status = tt.newStatus
			})
			if registrytest.CheckInvalid(t, err, tt.wantInvalid) {
				return
			}
			if got.Spec.MaxReplicas != tt.wantMax || got.Generation != tt.wantGeneration {
				t.Errorf("maxReplicas, generation: got %d, %d; want %d, %d", got.Spec.MaxReplicas, got.Generation, tt.wantMax, tt.wantGeneration)
			}
			if diff := cmp.Diff(tt.wantStatus, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFieldSelectors(t *testing.T) {
	store := registrytest.REST(t, NewStorage, "horizontalpodautoscalers")
	registrytest.CheckFields(t, store, validHPA(), fields.Set{"metadata.name": "web", "metadata.namespace": "default"})
}

func TestTable(t *testing.T) {
	withMetrics := func(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) *autoscalingv2.HorizontalPodAutoscaler {
		return registrytest.Modified(validHPA(), func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics, h.Status.CurrentMetrics = specs, statuses
		})
	}
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("512Mi")}}}
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("10")}}}
	object := autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "hits"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("1k")}}}
	containerCPU := autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
		Name: corev1.ResourceCPU, Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}}
	cpuStatus := autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
		Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](45)}}}
	externalStatus := autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
		Current: autoscalingv2.MetricValueStatus{Value: quantity("12")}}}
	tests := []registrytest.Row{
		{Name: "CPU, no status yet", Obj: validHPA(), Want: []any{"web", "Deployment/web", "cpu: <unknown>/80%", "1", int64(5), int64(0), "<unknown>"}},
		{
			Name: "CPU with a status, replicas",
			Obj: registrytest.Modified(withMetrics([]autoscalingv2.MetricSpec{cpu(80)}, []autoscalingv2.MetricStatus{cpuStatus}), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Status.CurrentReplicas = 3
			}),
			Want: []any{"web", "Deployment/web", "cpu: 45%/80%", "1", int64(5), int64(3), "<unknown>"},
		},
		{
			Name: "value and external metrics",
			Obj: withMetrics([]autoscalingv2.MetricSpec{memory, external("queue", autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("30")})},
				[]autoscalingv2.MetricStatus{{}, externalStatus}),
			Want: []any{"web", "Deployment/web", "memory: <unknown>/512Mi, 12/30", "1", int64(5), int64(0), "<unknown>"},
		},
		{
			Name: "more than two, no minReplicas",
			Obj: registrytest.Modified(withMetrics([]autoscalingv2.MetricSpec{pods, object, containerCPU, memory}, nil), func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.MinReplicas = nil
			}),
			Want: []any{"web", "Deployment/web", "<unknown>/10, <unknown>/1k (avg) + 2 more...", "<unset>", int64(5), int64(0), "<unknown>"},
		},
		{Name: "no metrics", Obj: withMetrics(nil, nil), Want: []any{"web", "Deployment/web", "<none>", "1", int64(5), int64(0), "<unknown>"}},
		{Name: "a container resource", Obj: withMetrics([]autoscalingv2.MetricSpec{containerCPU}, nil), Want: []any{"web", "Deployment/web", "cpu: <unknown>/60%", "1", int64(5), int64(0), "<unknown>"}},
	}
	store := registrytest.REST(t, NewStorage, "horizontalpodautoscalers")
	registrytest.CheckTable(t, store, []string{"Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"}, tests...)
}
