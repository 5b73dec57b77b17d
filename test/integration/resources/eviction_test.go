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
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/test/integration/framework"
)

// TestEviction: pods/eviction answers as kube-apiserver 1.37's (checked
// side by side): a running, ready pod that a PodDisruptionBudget allowing
// no disruption selects is not evicted (429, with the budget's reason);
// once the budget allows one, a dry run changes nothing, and an eviction
// deletes the pod and counts itself in the budget's status; a pending pod
// is evicted whatever its budget says.
func TestEviction(t *testing.T) {
	t.Parallel()
	_, client := framework.Start(t)
	ctx := t.Context()
	pods, budgets := client.CoreV1().Pods("default"), client.PolicyV1().PodDisruptionBudgets("default")
	labels := map[string]string{"app": "web"}
	newPod := func(name string) *corev1.Pod {
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	running := newPod("running")
	running.Status.Phase, running.Status.Conditions = corev1.PodRunning, []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := pods.UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	budget, err := budgets.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the disruption controller, which does not run here, would write.
	setStatus := func(allowed, healthy int32) {
		t.Helper()
		budget.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: budget.Generation, DisruptionsAllowed: allowed, CurrentHealthy: healthy, DesiredHealthy: 1, ExpectedPods: healthy}
		if budget, err = budgets.UpdateStatus(ctx, budget, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	evict := func(name string, dryRun ...string) error {
		return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name}, DeleteOptions: &metav1.DeleteOptions{DryRun: dryRun}})
	}

	setStatus(0, 1)
	err = evict("running")
	status, ok := err.(apierrors.APIStatus)
	if !apierrors.IsTooManyRequests(err) || !ok || status.Status().Details == nil || len(status.Status().Details.Causes) != 1 ||
		status.Status().Details.Causes[0].Message != "The disruption budget web needs 1 healthy pods and has 1 currently" {
		t.Errorf("evicting with no disruption allowed: got %v, want 429 with the budget's reason", err)
	}

	setStatus(1, 2)
	if err := evict("running", metav1.DryRunAll); err != nil {
		t.Fatalf("a dry-run eviction: %v", err)
	}
	if b, err := budgets.Get(ctx, "web", metav1.GetOptions{}); err != nil || b.Status.DisruptionsAllowed != 1 {
		t.Errorf("the budget after a dry run: %+v, %v; want 1 disruption still allowed", b.Status, err)
	}
	if err := evict("running"); err != nil {
		t.Fatalf("evicting with a disruption allowed: %v", err)
	}
	if _, err := pods.Get(ctx, "running", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the evicted pod: got %v, want it gone", err)
	}
	b, err := budgets.Get(ctx, "web", metav1.GetOptions{})
	if _, recorded := b.Status.DisruptedPods["running"]; err != nil || b.Status.DisruptionsAllowed != 0 || !recorded {
		t.Errorf("the budget after the eviction: %+v, %v; want no disruption allowed and the pod recorded", b.Status, err)
	}

	newPod("pending")
	if err := evict("pending"); err != nil {
		t.Errorf("evicting a pending pod: %v", err)
	}
	if err := evict("missing"); !apierrors.IsNotFound(err) {
		t.Errorf("evicting a missing pod: got %v, want 404", err)
	}
}
