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
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

var testHPATime = metav1.NewTime(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))

func quantity(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }

func hpaMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "uid-h", ResourceVersion: "42", Generation: 3,
		Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "x"}}
}

var testScaleTarget = autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}

// newHPAV2 is an autoscaling/v2 HorizontalPodAutoscaler with a metric of
// every source, a behavior and conditions, whose every field autoscaling/v1
// keeps (in its fields or its annotations). The CPU target comes last, as
// v1 puts it back.
func newHPAV2() *autoscalingv2.HorizontalPodAutoscaler {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: hpaMeta(),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: testScaleTarget,
			MinReplicas:    ptr.To[int32](2),
			MaxReplicas:    10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("512Mi")}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "requests-per-second", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("100")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "main", APIVersion: "networking.k8s.io/v1"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "hits"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: quantity("2k")}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue-length", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("30")}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: corev1.ResourceCPU, Container: "app",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
				cpuUtilization(70),
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
					Policies:  []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}},
					Tolerance: quantity("50m")},
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300), SelectPolicy: ptr.To(autoscalingv2.MinChangePolicySelect),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 10, PeriodSeconds: 60}}},
			},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: ptr.To[int64](3),
			LastScaleTime:      &testHPATime,
			CurrentReplicas:    3,
			DesiredReplicas:    4,
			CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageValue: quantity("250m"), AverageUtilization: ptr.To[int32](85)}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{
					Metric: autoscalingv2.MetricIdentifier{Name: "requests-per-second"}, Current: autoscalingv2.MetricValueStatus{AverageValue: quantity("120")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "main", APIVersion: "networking.k8s.io/v1"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "hits"}, Current: autoscalingv2.MetricValueStatus{Value: quantity("1500")}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue-length"}, Current: autoscalingv2.MetricValueStatus{Value: quantity("90"), AverageValue: quantity("30")}}},
			},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
				{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, LastTransitionTime: testHPATime, Reason: "ReadyForNewScale", Message: "ready", ObservedGeneration: ptr.To[int64](3)},
				{Type: autoscalingv2.ScalingLimited, Status: corev1.ConditionFalse, LastTransitionTime: testHPATime, Reason: "DesiredWithinRange"},
			},
		},
	}
}

// wantBehaviorAnnotation is newHPAV2's behavior as upstream writes it: its
// internal type marshalled, which has no json tags.
const wantBehaviorAnnotation = `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":"50m"},` +
	`"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}],"Tolerance":null}}`

func TestConvertHPAV2ToV1AndBack(t *testing.T) {
	in := newHPAV2()
	v1 := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := Scheme.Convert(in, v1, nil); err != nil {
		t.Fatalf("Convert to v1: got error %v, want none", err)
	}
	wantSpec := autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
		MinReplicas:    ptr.To[int32](2), MaxReplicas: 10, TargetCPUUtilizationPercentage: ptr.To[int32](70),
	}
	if diff := cmp.Diff(wantSpec, v1.Spec); diff != "" {
		t.Errorf("v1 spec (-want +got):\n%s", diff)
	}
	wantStatus := autoscalingv1.HorizontalPodAutoscalerStatus{ObservedGeneration: ptr.To[int64](3), LastScaleTime: &testHPATime,
		CurrentReplicas: 3, DesiredReplicas: 4, CurrentCPUUtilizationPercentage: ptr.To[int32](85)}
	if diff := cmp.Diff(wantStatus, v1.Status); diff != "" {
		t.Errorf("v1 status (-want +got):\n%s", diff)
	}
	wantKeys := []string{HPAMetricStatusesAnnotation, HPAConditionsAnnotation, HPAMetricSpecsAnnotation, HPABehaviorSpecsAnnotation, "note"}
	slices.Sort(wantKeys)
	var gotKeys []string
	for k := range v1.Annotations {
		gotKeys = append(gotKeys, k)
	}
	slices.Sort(gotKeys)
	if diff := cmp.Diff(wantKeys, gotKeys); diff != "" {
		t.Errorf("v1 annotations (-want +got):\n%s", diff)
	}
	if got := v1.Annotations[HPABehaviorSpecsAnnotation]; got != wantBehaviorAnnotation {
		t.Errorf("behavior annotation:\ngot  %s\nwant %s", got, wantBehaviorAnnotation)
	}
	wantMetrics := `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"512Mi"}},` +
		`{"type":"Pods","pods":{"metricName":"requests-per-second","targetAverageValue":"100","selector":{"matchLabels":{"queue":"jobs"}}}},` +
		`{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"hits","targetValue":"2k"}},` +
		`{"type":"External","external":{"metricName":"queue-length","metricSelector":{"matchLabels":{"queue":"jobs"}},"targetAverageValue":"30"}},` +
		`{"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":60,"container":"app"}}]`
	if got := v1.Annotations[HPAMetricSpecsAnnotation]; got != wantMetrics {
		t.Errorf("metrics annotation:\ngot  %s\nwant %s", got, wantMetrics)
	}

	back := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := Scheme.Convert(v1, back, nil); err != nil {
		t.Fatalf("Convert back to v2: got error %v, want none", err)
	}
	if diff := cmp.Diff(newHPAV2(), back); diff != "" {
		t.Errorf("v2 -> v1 -> v2 (-want +got):\n%s", diff)
	}
	// The outputs share nothing with their inputs.
	v1.Annotations["note"] = "y"
	*v1.Spec.MinReplicas = 9
	back.Spec.Metrics[0].Resource.Target.AverageValue.Add(resource.MustParse("1"))
	*back.Spec.Behavior.ScaleUp.SelectPolicy = autoscalingv2.DisabledPolicySelect
	if diff := cmp.Diff(newHPAV2(), in); diff != "" {
		t.Errorf("input after changing the outputs (-want +got):\n%s", diff)
	}
}

func TestConvertHPAV1ToV2(t *testing.T) {
	v1Status := autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2, CurrentCPUUtilizationPercentage: ptr.To[int32](40)}
	cpuStatus := []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
		Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](40)}}}}
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("1Gi")}}}
	tests := []struct {
		name            string
		targetCPU       *int32
		annotations     map[string]string
		wantMetrics     []autoscalingv2.MetricSpec
		wantBehavior    *autoscalingv2.HorizontalPodAutoscalerBehavior
		wantAnnotations map[string]string
	}{
		{name: "targetCPUUtilizationPercentage", targetCPU: ptr.To[int32](50), wantMetrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
		{name: "no target: 80% CPU", wantMetrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
		{
			name:        "other metrics and the CPU target after them",
			targetCPU:   ptr.To[int32](50),
			annotations: map[string]string{HPAMetricSpecsAnnotation: `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]`, "keep": "me"},
			wantMetrics: []autoscalingv2.MetricSpec{memory, cpuUtilization(50)}, wantAnnotations: map[string]string{"keep": "me"},
		},
		{
			name:        "other metrics only: no default CPU target",
			annotations: map[string]string{HPAMetricSpecsAnnotation: `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]`},
			wantMetrics: []autoscalingv2.MetricSpec{memory}, wantAnnotations: map[string]string{},
		},
		{
			name:        "object metric averageValue: a zero targetValue is left out",
			annotations: map[string]string{HPAMetricSpecsAnnotation: `[{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"m","targetValue":"0","averageValue":"5"}}]`},
			wantMetrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s"}, Metric: autoscalingv2.MetricIdentifier{Name: "m"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("5")}}}},
			wantAnnotations: map[string]string{},
		},
		{
			name:        "behavior in the lower-case keys of v2 too",
			annotations: map[string]string{HPABehaviorSpecsAnnotation: `{"scaleDown":{"stabilizationWindowSeconds":60}}`},
			wantMetrics: []autoscalingv2.MetricSpec{cpuUtilization(80)},
			wantBehavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}},
			wantAnnotations: map[string]string{},
		},
		{
			name: "unparsable and empty annotations are ignored and dropped",
			annotations: map[string]string{HPAMetricSpecsAnnotation: `{`, HPABehaviorSpecsAnnotation: `{}`, HPAConditionsAnnotation: `nope`,
				HPAToleranceScaleUpAnnotation: "1", HPAToleranceScaleDownAnnotation: "1"},
			wantMetrics:     []autoscalingv2.MetricSpec{cpuUtilization(80)},
			wantAnnotations: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &autoscalingv1.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: tt.annotations},
				Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
					MinReplicas: ptr.To[int32](1), MaxReplicas: 5, TargetCPUUtilizationPercentage: tt.targetCPU},
				Status: v1Status,
			}
			out := &autoscalingv2.HorizontalPodAutoscaler{}
			if err := Scheme.Convert(in, out, nil); err != nil {
				t.Fatalf("Convert: got error %v, want none", err)
			}
			want := &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: tt.wantAnnotations},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
					MinReplicas: ptr.To[int32](1), MaxReplicas: 5, Metrics: tt.wantMetrics, Behavior: tt.wantBehavior},
				Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2, CurrentMetrics: cpuStatus},
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("v2 (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertHPAToV1MakesItsOwnAnnotations: round-trip annotations the v2
// object carries are not passed on.
func TestConvertHPAToV1MakesItsOwnAnnotations(t *testing.T) {
	in := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{HPABehaviorSpecsAnnotation: "{}", HPAMetricSpecsAnnotation: "[]", "keep": "me"}},
		Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 3, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
	}
	out := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := Scheme.Convert(in, out, nil); err != nil {
		t.Fatalf("Convert: got error %v, want none", err)
	}
	if diff := cmp.Diff(map[string]string{"keep": "me"}, out.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if got := ptr.Deref(out.Spec.TargetCPUUtilizationPercentage, 0); got != 80 {
		t.Errorf("targetCPUUtilizationPercentage: got %d, want 80", got)
	}
	if len(in.Annotations) != 3 {
		t.Errorf("input annotations changed: %v", in.Annotations)
	}
}

func TestConvertHPALists(t *testing.T) {
	list := &autoscalingv2.HorizontalPodAutoscalerList{ListMeta: metav1.ListMeta{ResourceVersion: "9"},
		Items: []autoscalingv2.HorizontalPodAutoscaler{*newHPAV2()}}
	v1 := &autoscalingv1.HorizontalPodAutoscalerList{}
	if err := Scheme.Convert(list, v1, nil); err != nil {
		t.Fatalf("Convert to v1: got error %v, want none", err)
	}
	if len(v1.Items) != 1 || v1.ResourceVersion != "9" || ptr.Deref(v1.Items[0].Spec.TargetCPUUtilizationPercentage, 0) != 70 {
		t.Fatalf("v1 list: got %+v", v1)
	}
	back := &autoscalingv2.HorizontalPodAutoscalerList{}
	if err := Scheme.Convert(v1, back, nil); err != nil {
		t.Fatalf("Convert back: got error %v, want none", err)
	}
	if diff := cmp.Diff(list, back); diff != "" {
		t.Errorf("list v2 -> v1 -> v2 (-want +got):\n%s", diff)
	}
}

// TestConvertHPAV1ToHub converts as the API handlers do: a v1 object to
// the autoscaling hub (which has no kind set) and back to v1.
func TestConvertHPAV1ToHub(t *testing.T) {
	hub := schema.GroupVersion{Group: autoscalingv1.GroupName, Version: runtime.APIVersionInternal}
	v1 := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 4, TargetCPUUtilizationPercentage: ptr.To[int32](60)}}
	obj, err := Scheme.ConvertToVersion(v1, hub)
	if err != nil {
		t.Fatalf("ConvertToVersion(hub): got error %v, want none", err)
	}
	internal, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		t.Fatalf("hub object: got %T, want *v2.HorizontalPodAutoscaler", obj)
	}
	if diff := cmp.Diff([]autoscalingv2.MetricSpec{cpuUtilization(60)}, internal.Spec.Metrics); diff != "" {
		t.Errorf("hub metrics (-want +got):\n%s", diff)
	}
	obj, err = Scheme.ConvertToVersion(internal, autoscalingv1.SchemeGroupVersion)
	if err != nil {
		t.Fatalf("ConvertToVersion(v1): got error %v, want none", err)
	}
	if got, ok := obj.(*autoscalingv1.HorizontalPodAutoscaler); !ok || ptr.Deref(got.Spec.TargetCPUUtilizationPercentage, 0) != 60 ||
		got.GroupVersionKind() != autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler") {
		t.Errorf("back to v1: got %#v", obj)
	}
}

func TestDropHPARoundTripAnnotations(t *testing.T) {
	none := map[string]string{"a": "b"}
	if diff := cmp.Diff(none, DropHPARoundTripAnnotations(none)); diff != "" {
		t.Errorf("no round-trip annotations (-want +got):\n%s", diff)
	}
	some := map[string]string{"a": "b", HPAConditionsAnnotation: "[]", HPAToleranceScaleUpAnnotation: "1"}
	if diff := cmp.Diff(map[string]string{"a": "b"}, DropHPARoundTripAnnotations(some)); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
	if len(some) != 3 {
		t.Errorf("input changed: %v", some)
	}
}
