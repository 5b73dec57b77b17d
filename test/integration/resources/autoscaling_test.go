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

package resources

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/server"
	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestHorizontalPodAutoscalers serves HorizontalPodAutoscalers in
// autoscaling/v2 and autoscaling/v1, one storage, on both storage paths:
// kubectl autoscale and get hpa, and client-go's typed clients of both
// versions round-tripping what only v2 can say through v1.
func TestHorizontalPodAutoscalers(t *testing.T) {
	t.Parallel()
	framework.ForEachStoragePath(t, func(t *testing.T, path func(*server.Options)) {
		t.Parallel()
		s, client := framework.Start(t, path)
		ns := framework.CreateNamespace(t, client)
		ctx := t.Context()

		t.Run("kubectl autoscale and get hpa", func(t *testing.T) {
			framework.Kubectl(t, s, "", "create", "deployment", "web", "--image=nginx:1.27", "-n", ns)
			out := framework.Kubectl(t, s, "", "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80", "-n", ns)
			if want := "horizontalpodautoscaler.autoscaling/web autoscaled"; strings.TrimSpace(out) != want {
				t.Errorf("kubectl autoscale: got %q, want %q", out, want)
			}
			hpa, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantSpec := autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
				MinReplicas:    ptr.To[int32](2), MaxReplicas: 5, Metrics: []autoscalingv2.MetricSpec{cpuMetric(80)},
			}
			if diff := cmp.Diff(wantSpec, hpa.Spec); diff != "" || hpa.Generation != 1 {
				t.Errorf("autoscaler made by kubectl: generation %d (want 1), spec (-want +got):\n%s", hpa.Generation, diff)
			}
			for _, args := range [][]string{{"get", "hpa", "-n", ns}, {"get", "horizontalpodautoscalers.v1.autoscaling", "-n", ns}} {
				lines := strings.Split(strings.TrimSpace(framework.Kubectl(t, s, "", args...)), "\n")
				if len(lines) != 2 {
					t.Fatalf("kubectl %s: got %q, want a header and a row", strings.Join(args, " "), lines)
				}
				if got, want := tableCells(lines[0]), []string{"NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"}; !slices.Equal(got, want) {
					t.Errorf("kubectl %s columns: got %q, want %q", strings.Join(args, " "), got, want)
				}
				if got, want := tableCells(lines[1]), []string{"web", "Deployment/web", "cpu: <unknown>/80%", "2", "5", "0"}; len(got) != 7 || !slices.Equal(got[:6], want) {
					t.Errorf("kubectl %s row: got %q, want it to start with %q", strings.Join(args, " "), got, want)
				}
			}
		})

		t.Run("discovery", func(t *testing.T) {
			groups, err := client.Discovery().ServerGroups()
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "autoscaling" })
			if i < 0 || groups.Groups[i].PreferredVersion.Version != "v2" || len(groups.Groups[i].Versions) != 2 {
				t.Fatalf("autoscaling in discovery: got %+v, want v2 preferred over v1", groups.Groups)
			}
			for _, gv := range []string{"autoscaling/v2", "autoscaling/v1"} {
				list, err := client.Discovery().ServerResourcesForGroupVersion(gv)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range list.APIResources {
					got = append(got, r.Name)
					if r.Name == "horizontalpodautoscalers" && (r.Kind != "HorizontalPodAutoscaler" || !r.Namespaced || !slices.Equal(r.ShortNames, []string{"hpa"}) || !slices.Equal(r.Categories, []string{"all"})) {
						t.Errorf("%s horizontalpodautoscalers: got %+v", gv, r)
					}
				}
				if want := []string{"horizontalpodautoscalers", "horizontalpodautoscalers/status"}; !slices.Equal(got, want) {
					t.Errorf("%s resources: got %v, want %v", gv, got, want)
				}
			}
			out := framework.Kubectl(t, s, "", "api-resources", "--no-headers", "--api-group=autoscaling")
			if got, want := strings.Fields(out), []string{"horizontalpodautoscalers", "hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"}; !slices.Equal(got, want) {
				t.Errorf("kubectl api-resources --api-group=autoscaling: got %q, want %q", got, want)
			}
			if out := framework.Kubectl(t, s, "", "get", "all", "-n", ns, "-o", "name"); !framework.ContainsField(out, "horizontalpodautoscaler.autoscaling/web") {
				t.Errorf("kubectl get all: no horizontalpodautoscaler.autoscaling/web in\n%s", out)
			}
		})

		t.Run("v2 with memory and behavior, through v1, and back", func(t *testing.T) {
			checkHPAThroughV1(t, client, ns)
		})

		t.Run("v1 without a CPU target", func(t *testing.T) {
			v1, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: "plain"},
				Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
					ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ptr.Deref(v1.Spec.MinReplicas, -1) != 1 || ptr.Deref(v1.Spec.TargetCPUUtilizationPercentage, -1) != 80 || len(v1.Annotations) != 0 {
				t.Errorf("v1 created: got minReplicas %v, targetCPU %v, annotations %v; want 1, 80 and none", v1.Spec.MinReplicas, v1.Spec.TargetCPUUtilizationPercentage, v1.Annotations)
			}
			v2, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "plain", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]autoscalingv2.MetricSpec{cpuMetric(80)}, v2.Spec.Metrics); diff != "" {
				t.Errorf("v2 metrics (-want +got):\n%s", diff)
			}
		})

		t.Run("status subresource", func(t *testing.T) {
			hpas := client.AutoscalingV2().HorizontalPodAutoscalers(ns)
			hpa, err := hpas.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			hpa.Spec.MaxReplicas = 50
			hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3, ObservedGeneration: ptr.To[int64](1),
				CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
					Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](95), AverageValue: ptr.To(resource.MustParse("120m"))}}}}}
			updated, err := hpas.UpdateStatus(ctx, hpa, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if updated.Spec.MaxReplicas != 5 || updated.Generation != 1 || updated.Status.DesiredReplicas != 3 {
				t.Errorf("after a status update: got maxReplicas %d, generation %d, desiredReplicas %d; want 5, 1, 3", updated.Spec.MaxReplicas, updated.Generation, updated.Status.DesiredReplicas)
			}
			// A main update keeps the status.
			updated.Spec.MaxReplicas = 6
			updated.Status.DesiredReplicas = 0
			if updated, err = hpas.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if updated.Spec.MaxReplicas != 6 || updated.Generation != 2 || updated.Status.DesiredReplicas != 3 {
				t.Errorf("after an update: got maxReplicas %d, generation %d, desiredReplicas %d; want 6, 2, 3", updated.Spec.MaxReplicas, updated.Generation, updated.Status.DesiredReplicas)
			}
			v1, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ptr.Deref(v1.Status.CurrentCPUUtilizationPercentage, -1) != 95 || v1.Annotations["autoscaling.alpha.kubernetes.io/current-metrics"] == "" {
				t.Errorf("v1 status: got %+v, annotations %v; want currentCPUUtilizationPercentage 95 and the current metrics", v1.Status, v1.Annotations)
			}
			// The status through v1 keeps the raw value v2 had.
			v1.Status.DesiredReplicas = 4
			if _, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).UpdateStatus(ctx, v1, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			hpa, err = hpas.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if hpa.Status.DesiredReplicas != 4 || len(hpa.Status.CurrentMetrics) != 1 || hpa.Status.CurrentMetrics[0].Resource.Current.AverageValue.String() != "120m" || len(hpa.Annotations) != 0 {
				t.Errorf("v2 after a v1 status update: got %+v, annotations %v", hpa.Status, hpa.Annotations)
			}
			lines := strings.Split(strings.TrimSpace(framework.Kubectl(t, s, "", "get", "hpa", "web", "-n", ns)), "\n")
			if got, want := tableCells(lines[len(lines)-1]), []string{"web", "Deployment/web", "cpu: 95%/80%", "2", "6", "2"}; len(got) != 7 || !slices.Equal(got[:6], want) {
				t.Errorf("kubectl get hpa after the status update: got %q, want it to start with %q", got, want)
			}
		})

		t.Run("lists and watches in both versions", func(t *testing.T) {
			v1List, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, h := range v1List.Items {
				names = append(names, h.Name)
				if h.Spec.TargetCPUUtilizationPercentage == nil {
					t.Errorf("v1 list item %s: no targetCPUUtilizationPercentage", h.Name)
				}
			}
			if want := []string{"memory", "plain", "web"}; !slices.Equal(names, want) {
				t.Errorf("v1 list: got %v, want %v", names, want)
			}
			w, err := client.AutoscalingV1().HorizontalPodAutoscalers(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: v1List.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(ctx, "plain", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case ev := <-w.ResultChan():
				h, ok := ev.Object.(*autoscalingv1.HorizontalPodAutoscaler)
				if ev.Type != "DELETED" || !ok || h.Name != "plain" || ptr.Deref(h.Spec.TargetCPUUtilizationPercentage, -1) != 80 {
					t.Errorf("v1 watch: got %s %#v, want the deletion of plain as v1", ev.Type, ev.Object)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("v1 watch: no event within 10s")
			}
		})

		t.Run("validation", func(t *testing.T) {
			_, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: "bad"},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
					Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType}}},
			}, metav1.CreateOptions{})
			checkInvalid(t, err, []string{
				"spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
				`spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group`,
				"spec.metrics[0].pods: Required value: must populate information for the given metric source",
				"spec.maxReplicas: Required value",
			})
			_, err = client.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: "bad"},
				Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](0), MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To[int32](0),
					ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "ReplicationController", Name: "rc"}},
			}, metav1.CreateOptions{})
			checkInvalid(t, err, []string{
				"spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
				"spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
			}) // minReplicas 0 itself is allowed: HPAScaleToZero is beta and on in 1.37
		})

		// The namespace controller empties them too.
		t.Run("namespace deletion", func(t *testing.T) {
			framework.DeleteNamespace(t, client, ns)
			if list, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
				t.Errorf("autoscalers left in the deleted namespace: %v, %v", list, err)
			}
		})
	})
}

// checkHPAThroughV1 creates an autoscaler with client-go's autoscaling/v2
// client whose memory metric and behavior autoscaling/v1 cannot say, reads
// it with the v1 client, updates it there, and reads it again with v2.
func checkHPAThroughV1(t *testing.T, client kubernetes.Interface, ns string) {
	ctx := t.Context()
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("512Mi"))}}}
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), Tolerance: ptr.To(resource.MustParse("50m")),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 30}}},
	}
	created, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "memory", Annotations: map[string]string{"team": "a"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MaxReplicas:    4, Metrics: []autoscalingv2.MetricSpec{memory, cpuMetric(60)}, Behavior: behavior,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The server's defaults: the behavior's missing rules and fields.
	wantBehavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}, {Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies: behavior.ScaleDown.Policies, Tolerance: behavior.ScaleDown.Tolerance},
	}
	if diff := cmp.Diff(wantBehavior, created.Spec.Behavior); diff != "" {
		t.Errorf("created behavior (-want +got):\n%s", diff)
	}

	v1client := client.AutoscalingV1().HorizontalPodAutoscalers(ns)
	v1, err := v1client.Get(ctx, "memory", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(v1.Spec.TargetCPUUtilizationPercentage, -1); got != 60 {
		t.Errorf("v1 targetCPUUtilizationPercentage: got %d, want 60", got)
	}
	wantMetrics := `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"512Mi"}}]`
	if got := v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; got != wantMetrics {
		t.Errorf("v1 metrics annotation: got %s, want %s", got, wantMetrics)
	}
	if got := v1.Annotations["autoscaling.alpha.kubernetes.io/behavior"]; !strings.Contains(got, `"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}],"Tolerance":"50m"}`) {
		t.Errorf("v1 behavior annotation: got %s", got)
	}
	if v1.Annotations["team"] != "a" {
		t.Errorf("v1 annotations: got %v, want team=a kept", v1.Annotations)
	}

	v1.Spec.MaxReplicas = 8
	v1.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](70)
	if _, err := v1client.Update(ctx, v1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v2, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "memory", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]autoscalingv2.MetricSpec{memory, cpuMetric(70)}, v2.Spec.Metrics); diff != "" {
		t.Errorf("v2 metrics after the v1 update (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBehavior, v2.Spec.Behavior); diff != "" {
		t.Errorf("v2 behavior after the v1 update (-want +got):\n%s", diff)
	}
	if v2.Spec.MaxReplicas != 8 || v2.Generation != 2 || !cmp.Equal(map[string]string{"team": "a"}, v2.Annotations) {
		t.Errorf("v2 after the v1 update: got maxReplicas %d, generation %d, annotations %v; want 8, 2, team=a only", v2.Spec.MaxReplicas, v2.Generation, v2.Annotations)
	}
}

func cpuMetric(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)}}}
}

// checkInvalid fails t unless err is a 422 whose causes are want, in order.
func checkInvalid(t *testing.T, err error, want []string) {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !ok || !apierrors.IsInvalid(err) {
		t.Fatalf("got error %v, want Invalid", err)
	}
	var got []string
	for _, c := range status.Status().Details.Causes {
		got = append(got, c.Field+": "+c.Message)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}
