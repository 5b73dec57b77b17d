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

package pod

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
)

func TestFieldSelectors(t *testing.T) {
	p := newPods(t)
	pod := modified(validPod(), func(pod *corev1.Pod) {
		pod.Spec.NodeName = "node-1"
		pod.Status.Phase = corev1.PodRunning
	})
	registrytest.CheckFields(t, p.store, pod, api.PodFields(pod))
	tests := []struct {
		selector string
		want     bool
	}{
		{selector: "spec.nodeName=node-1", want: true},
		{selector: "spec.nodeName=", want: false},
		{selector: "status.phase=Running,metadata.namespace=default", want: true},
		{selector: "spec.restartPolicy=Never", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			pred := p.store.PredicateFunc(labels.Everything(), fields.ParseSelectorOrDie(tt.selector))
			got, err := pred.Matches(pod)
			if err != nil || got != tt.want {
				t.Errorf("Matches(%q): got (%v, %v), want (%v, nil)", tt.selector, got, err, tt.want)
			}
		})
	}
}

// TestTable: the columns and cells of upstream's pod printer
// (printPod, wide), case by case.
func TestTable(t *testing.T) {
	now := metav1.Now()
	hourAgo := metav1.NewTime(now.Add(-time.Hour))
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	terminated := func(reason string, code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}
	}
	initDone := []corev1.ContainerStatus{{Name: "init", State: terminated("Completed", 0)}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []any
	}{
		{
			name: "no status yet",
			pod:  validPod(),
			want: []any{"web", "0/2", "", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "running: ready only if running; restarts summed, with the last one's age",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Spec.NodeName = "node-1"
				p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{
					{Name: "app", Ready: true, State: running, RestartCount: 2,
						LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: hourAgo}}},
					{Name: "sidecar", Ready: true, RestartCount: 3},
				}}
			}),
			want: []any{"web", "1/2", "Running", "5 (60m ago)", "<unknown>", "10.0.0.1", "node-1", "<none>", "<none>"},
		},
		{
			name: "an init container running",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: running}}}
			}),
			want: []any{"web", "0/2", "Init:0/1", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "an init container crash-looping",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: waiting("CrashLoopBackOff"), RestartCount: 4}}}
			}),
			want: []any{"web", "0/2", "Init:CrashLoopBackOff", "4", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "an init container failed without a reason",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: terminated("", 3)}}}
			}),
			want: []any{"web", "0/2", "Init:ExitCode:3", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "a started sidecar counts, and the last container's waiting reason is the status",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
				p.Status = corev1.PodStatus{Phase: corev1.PodPending,
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: running, Started: ptr.To(true), Ready: true}},
					ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", State: waiting("ContainerCreating")}, {Name: "sidecar", State: running, Ready: true}},
				}
			}),
			want: []any{"web", "2/3", "ContainerCreating", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "completed but one still running and not ready: NotReady",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{
					{Name: "app", State: terminated("Completed", 0)}, {Name: "sidecar", State: running, Ready: true},
				}}
			}),
			want: []any{"web", "1/2", "NotReady", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "reason replaces the phase; readiness gates and nominated node",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}}
				p.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", NominatedNodeName: "node-2",
					Conditions: []corev1.PodCondition{{Type: "a", Status: corev1.ConditionTrue}, {Type: "b", Status: corev1.ConditionFalse}}}
			}),
			want: []any{"web", "0/2", "Evicted", "0", "<unknown>", "<none>", "<none>", "node-2", "1/2"},
		},
		{
			name: "deleted pods are Terminating",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.DeletionTimestamp = &now
				p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Reason: "Whatever"}
			}),
			want: []any{"web", "0/2", "Terminating", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "but not once they have ended",
			pod: modified(validPod(), func(p *corev1.Pod) {
				p.DeletionTimestamp = &now
				p.Status = corev1.PodStatus{Phase: corev1.PodSucceeded}
			}),
			want: []any{"web", "0/2", "Succeeded", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
	}
	p := newPods(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := p.store.ConvertToTable(context.Background(), tt.pod, nil)
			if err != nil {
				t.Fatalf("ConvertToTable: got error %v, want none", err)
			}
			var columns []string
			for _, c := range table.ColumnDefinitions {
				columns = append(columns, c.Name)
			}
			if diff := cmp.Diff([]string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}, columns); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows: got %d, want 1", len(table.Rows))
			}
			if diff := cmp.Diff(tt.want, table.Rows[0].Cells); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}
